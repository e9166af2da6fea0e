/**
 * Which paths of a synced folder the bootstrap (bootstrap.ts) must leave out: Syncthing's
 * `.stignore` rules (lib/ignore, v1.30), read the same way but matched on the safe side.
 *
 * The bootstrap copies the folder into the container before Syncthing has indexed it, so it must
 * never send a path Syncthing would ignore (an ignored `.env` or key must not reach the cluster).
 * Leaving out a path Syncthing would have synced only costs time: Syncthing sends it afterwards.
 * So every pattern counts as "leave out", negated ones (`!keep`) included, a directory matched
 * leaves out its whole subtree, `(?i)` matches without case, and an ignore file this module cannot
 * read (a missing `#include`, a malformed glob) turns the bootstrap off rather than guessing.
 *
 * Syncthing's reading of a line, followed here: blank lines and `//` comments are skipped;
 * `#include FILE` reads FILE relative to the including file; the prefixes `!`, `(?i)` and `(?d)`
 * come in any order; `/x` is rooted, any other pattern also matches at any depth (`**` + `/x`);
 * `x` also matches everything under `x` (`x/**`), and `x/` means `x/**`. Globs use `/` as the
 * separator: `*` and `?` stay within a name, `**` crosses names (and `a/` `**` `/z` also matches `a/z`), plus `[...]`, `[!...]`, `{a,b}`
 * and `\` escapes.
 */
import { existsSync } from 'node:fs';
import { readInputFile } from '../io/input-file.ts';
import { dirname, join, relative, sep } from 'node:path';

/** Tells whether a path (relative, `/`-separated) must be left out of the bootstrap. */
export type LeaveOut = (path: string) => boolean;

/** Names Syncthing never syncs (fs.IsInternal at the root, fs.IsTemporary anywhere). */
const INTERNAL = new Set(['.stfolder', '.stignore', '.stversions']);

function isSyncthingOwn(path: string): boolean {
  if (INTERNAL.has(path.split('/')[0]!)) return true;
  const name = path.slice(path.lastIndexOf('/') + 1);
  return (name.startsWith('.syncthing.') || name.startsWith('~syncthing~')) && name.endsWith('.tmp');
}

/**
 * The leave-out test of `folder`'s `.stignore` plus `extraLines` (patterns the container's end gets
 * beyond the user's, container-guard.ts), or undefined when the file cannot be read the way
 * Syncthing reads it (the caller then skips the bootstrap). No `.stignore`: only Syncthing's own files.
 */
export function leaveOutMatcher(folder: string, extraLines: readonly string[] = []): LeaveOut | undefined {
  let regexes: RegExp[];
  try {
    regexes = [...readIgnoreFile(folder, join(folder, '.stignore'), new Set(), true), ...extraLines.flatMap(lineRegexes)];
  } catch {
    return undefined;
  }
  return (path) => isSyncthingOwn(path) || regexes.some((r) => r.test(path));
}

function readIgnoreFile(folder: string, file: string, seen: Set<string>, optional: boolean): RegExp[] {
  // Too large: throws, and the caller turns the bootstrap off.
  const text = readInputFile(file, 'stignore');
  if (text === undefined) {
    // Missing is "no patterns"; there but unreadable must not be (an ignored secret would be sent).
    if (optional && !existsSync(file)) return [];
    throw new Error(`cannot read ${file}`);
  }
  const out: RegExp[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('//') || seen.has(line)) continue;
    seen.add(line);
    if (line.startsWith('#include')) {
      const target = line.slice('#include'.length).trim();
      if (target === '' || !/^#include\s/.test(line)) throw new Error(`bad #include line: ${line}`);
      const path = join(dirname(file), target);
      if (relative(folder, path).split(sep)[0] === '..') throw new Error(`#include outside the folder: ${target}`);
      out.push(...readIgnoreFile(folder, path, seen, false));
      continue;
    }
    out.push(...lineRegexes(line));
  }
  return out;
}

/** The regexes of one pattern line (exported for the unit tests). */
export function lineRegexes(line: string): RegExp[] {
  let rest = line;
  let foldCase = false;
  for (let again = true; again; ) {
    again = false;
    for (const prefix of ['!', '(?i)', '(?d)']) {
      if (rest.startsWith(prefix)) {
        if (prefix === '(?i)') foldCase = true;
        rest = rest.slice(prefix.length);
        again = true;
      }
    }
  }
  if (rest === '') throw new Error(`missing pattern: ${line}`);
  const globs = rest.endsWith('/**') ? [rest] : rest.endsWith('/') ? [`${rest}**`] : [rest, `${rest}/**`];
  const anchored = globs.flatMap((g) => (g.startsWith('/') ? [g.slice(1)] : g.startsWith('**/') ? [g, g.slice(3)] : [g, `**/${g}`]));
  return anchored.map((g) => new RegExp(`^${globToRegex(g)}$`, foldCase ? 'is' : 's'));
}

/** A glob (gobwas/glob with `/` as separator) as a regular expression source. */
export function globToRegex(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      if (i + 1 >= glob.length) throw new Error(`trailing \\ in ${glob}`);
      out += escapeRegex(glob[++i]!);
    } else if (c === '*') {
      if (glob.startsWith('**/', i) && (i === 0 || glob[i - 1] === '/')) {
        // gobwas lets a slash, two stars, a slash match one slash (`a/z` for that pattern between a and z).
        out += '(?:.*/)?';
        i += 2;
      } else if (glob[i + 1] === '*') {
        out += '.*';
        i++;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) throw new Error(`unclosed [ in ${glob}`);
      const body = glob.slice(i + 1, end);
      // Negated classes may also match `/` here: a wider match only leaves out more.
      out += body.startsWith('!') ? `[^${classBody(body.slice(1))}]` : `[${classBody(body)}]`;
      i = end;
    } else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else out += escapeRegex(c);
  }
  if (braces !== 0) throw new Error(`unclosed { in ${glob}`);
  return out;
}

function classBody(body: string): string {
  if (body === '') throw new Error('empty [] class');
  return body.replace(/[\\\]^[]/g, (m) => `\\${m}`);
}

function escapeRegex(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, (m) => `\\${m}`);
}
