// The rules of the docs check (scripts/docs-check.ts), pure: a repository is given as its list of
// paths and the texts to check, and the answer is the list of findings.
//
// What is checked: every Markdown file (`*.md`) as a whole, and the comments of every source file
// (comments.ts says which files have comments and how they are found). Strings in code are not:
// they are data, and a wrong path there fails a test.
//
// Cited paths (docs and comments). A cited path is a word made of letters, digits, `_ . - *` and
// `/` that does not follow a letter, digit, `/`, `.`, `~`, `$`, `:`, `@` or `\` (so URLs, absolute
// paths, `~/...`, `$VAR/...`, `host:port/...` and package names are not paths), with any trailing
// dots dropped, and that is one of:
//   - rooted: its first segment is a top-level file or folder of the repository (`src/dev/up.ts`,
//     `docs/`, `chart/values.yaml`): it must exist, and with a trailing `/` be a folder;
//   - a source file's name: it ends in .ts, .mts, .cts, .mjs, .cjs or .md, with or without folders
//     before it (`up-session.ts`, `kube/client.ts`): some path of the repository ends with it,
//     whole segments.
// A Markdown link's target (`[text](target)`, not a URL) must exist relative to the Markdown file.
// `*` matches within a segment, `**/` any folders. Not paths: words starting with `./`, `../` or
// `...` (a user's project: `./data`, `../other`), other file names (`contexts.json`, `compose.yaml`,
// Syncthing's `lib/model/model.go`: runtime files, user files, upstream sources), words under a
// folder the .gitignore names (the build's `dist/devtool.cjs`, also before a build), words next to
// a placeholder (`<name>`, `{name}`, `$NAME`: `test/e2e/<name>.e2e.test.ts`), with a capital
// letter four times in a row (`NNNN-title.md`) or starting `path/to/`. Tests (`*.test.ts`,
// `*_test.go`, testdata/, fixtures/) are not checked for paths: their comments describe the trees
// they make (`a/b/c`).
//
// Citations a reader of the repository cannot follow (docs and comments): the words ruling, issue
// or finding followed by a number (`#` allowed), the requirements documents cited as the phrase
// made of "the" and "reference" (an image's reference is "the image reference"), and paths into a
// `shared` folder outside the clone. Upstream bugs are cited by URL or `owner/repo#N`.
//
// Dated figures (comments only): a date (ISO, or a month and a year) within two lines' reach
// (160 characters) of a measurement (a number with a unit of time, size, a percentage or a
// factor). Figures belong in the benchmarks' result files, which carry their date and machine.
//
// Sizes (docs): the repository's README, what a user reads first, under 10 KiB; a decision record
// (one Markdown file per decision under docs/) at most 8 KiB; their index, one line per record and
// scanned rather than read, 32 KiB (some 250 lines); any other Markdown file at most 40 KiB, about
// 6,000 words or half an hour of reading: a page longer than that holds two subjects and reads
// better split.
import { dirname, posix } from 'node:path';
import { type Comment, commentsOf } from './comments.ts';

export interface Finding {
  path: string;
  line: number;
  message: string;
}

const KIB = 1024;

const SIZE_LIMITS: readonly { pattern: RegExp; bytes: number; what: string }[] = [
  { pattern: /^README\.md$/, bytes: 10 * KIB, what: 'the README' },
  { pattern: /^docs\/decisions\/README\.md$/, bytes: 32 * KIB, what: 'the index of decisions' },
  { pattern: /^docs\/decisions\/[^/]+\.md$/, bytes: 8 * KIB, what: 'a decision record' },
  { pattern: /\.md$/, bytes: 40 * KIB, what: 'a Markdown file' },
];

const SOURCE_FILE = /(^|\/)\.?[\w-][\w.*-]*\.(ts|mts|cts|mjs|cjs|md)$/;
const TEST_FILE = /\.test\.ts$|_test\.go$|(^|\/)(testdata|fixtures)\//;
const PATH_WORD = /(?<![\w./~$:@\\*-])(?:\.\.?\/)*[\w.*-]+(?:\/[\w.*-]+)*\/?/g;
const MARKDOWN_LINK = /\]\(([^()\s]+)\)/g;
const PLACEHOLDER_NEIGHBOUR = /[<>{}$]/;

const SEPARATOR = String.raw`(?:\s|\*|\/\/|#)+`;
const CITATIONS: readonly { pattern: RegExp; what: string }[] = [
  { pattern: new RegExp(String.raw`\b(ruling|issue|finding)s?${SEPARATOR}#?\d+(?!-\w|\.\d|\w)`, 'gi'), what: 'a numbered $1' },
  { pattern: new RegExp(String.raw`\bthe${SEPARATOR}reference\b`, 'gi'), what: 'the requirements documents' },
  { pattern: /(?<![\w-])shared\//g, what: 'the shared folder outside the repository' },
];

const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\\.?';
const DATE = new RegExp(String.raw`\b(?:20\d\d-[01]\d-[0-3]\d|(?:\d{1,2}\s+)?${MONTH}\s+20\d\d|${MONTH}\s+\d{1,2},\s+20\d\d)\b`, 'g');
const FIGURE = /\b\d+(?:[.,]\d+)?\s?(?:ns|µs|us|ms|s|sec|seconds?|min|minutes?|h|hours?|[KMG]i?B|bytes?|%|x)(?![\w])/;
const DATE_REACH = 160;

/**
 * The top-level folders a .gitignore names plainly (`dist/`, `/tmp/`, `node_modules`): what the
 * build and tools make, which a fresh clone does not have yet. Patterns with wildcards, nested
 * paths and negations name no such folder.
 */
export function ignoredFolderNames(gitignore: string): string[] {
  return gitignore
    .split('\n')
    .map((line) => line.trim().replace(/^\//, '').replace(/\/$/, ''))
    .filter((name) => name !== '' && !/^[#!]|[*?[\]/]/.test(name));
}

/** Lines of a text, so a match's offset in a comment becomes a line of the file. */
function lineOf(text: string, offset: number, firstLine: number): number {
  let line = firstLine;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

export class PathIndex {
  private readonly files: Set<string>;
  private readonly folders = new Set<string>();
  private readonly topLevel = new Set<string>();

  /** `paths`: every file (tracked, or new and not ignored); `ignored`: the top-level folders git ignores. */
  constructor(
    paths: readonly string[],
    private readonly ignored: readonly string[] = [],
  ) {
    this.files = new Set(paths);
    for (const path of paths) {
      const segments = path.split('/');
      this.topLevel.add(segments[0]!);
      for (let i = 1; i < segments.length; i++) this.folders.add(segments.slice(0, i).join('/'));
    }
  }

  isRooted(word: string): boolean {
    return this.topLevel.has(word.split('/')[0]!);
  }

  isIgnored(word: string): boolean {
    return this.ignored.includes(word.split('/')[0]!);
  }

  /** `word` names a file or (ending in `/`, or any) folder; `*` matches within a segment. */
  exists(word: string): boolean {
    const folderOnly = word.endsWith('/');
    const path = folderOnly ? word.slice(0, -1) : word;
    if (!path.includes('*')) return this.folders.has(path) || (!folderOnly && this.files.has(path));
    const pattern = globPattern(path);
    return [...this.folders, ...(folderOnly ? [] : this.files)].some((p) => pattern.test(p));
  }

  /** Some file or folder of the repository ends with `tail`, whole segments. */
  endsWith(tail: string): boolean {
    const pattern = new RegExp(`(^|/)${globSource(tail)}$`);
    for (const p of this.files) if (pattern.test(p)) return true;
    for (const p of this.folders) if (pattern.test(p)) return true;
    return false;
  }
}

function globSource(path: string): string {
  const literal = (part: string) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return path
    .split('**/')
    .map((part) => part.split('*').map(literal).join('[^/]*'))
    .join('(?:[^/]+/)*');
}

function globPattern(path: string): RegExp {
  return new RegExp(`^${globSource(path)}$`);
}

/** What is wrong with a cited word, or undefined when it is fine or no path at all. */
function pathProblem(word: string, index: PathIndex): string | undefined {
  if (/^(\.\.?|path\/to)\//.test(word) || word.startsWith('...') || /([A-Z])\1{3}/.test(word) || index.isIgnored(word)) return undefined;
  if (index.isRooted(word)) return index.exists(word) ? undefined : `${word} does not exist`;
  if (SOURCE_FILE.test(word)) return index.endsWith(word) ? undefined : `no file of the repository is ${word}`;
  return undefined;
}

/** Cited paths in a text that starts on `firstLine` of `citingFile`. */
export function checkPaths(citingFile: string, text: string, firstLine: number, index: PathIndex, markdown: boolean): Finding[] {
  const findings: Finding[] = [];
  let rest = text;
  if (markdown) {
    for (const link of text.matchAll(MARKDOWN_LINK)) {
      const target = link[1]!.replace(/#.*$/, '');
      const offset = link.index + 2;
      rest = rest.slice(0, offset) + ' '.repeat(link[1]!.length) + rest.slice(offset + link[1]!.length);
      if (target === '' || /^[a-z][a-z+.-]*:/i.test(target) || target.startsWith('/')) continue;
      const resolved = posix.normalize(posix.join(dirname(citingFile), target));
      if (!index.exists(resolved) && !index.exists(`${resolved}/`)) {
        findings.push({ path: citingFile, line: lineOf(text, offset, firstLine), message: `link to ${target}: no such file` });
      }
    }
  }
  for (const match of rest.matchAll(PATH_WORD)) {
    const before = rest[match.index - 1] ?? '';
    const after = rest[match.index + match[0].length] ?? '';
    if (PLACEHOLDER_NEIGHBOUR.test(before) || PLACEHOLDER_NEIGHBOUR.test(after)) continue;
    const word = match[0].replace(/\.+$/, '');
    const problem = pathProblem(word, index);
    if (problem) findings.push({ path: citingFile, line: lineOf(rest, match.index, firstLine), message: `cited path: ${problem}` });
  }
  return findings;
}

export function checkCitations(path: string, text: string, firstLine: number): Finding[] {
  const findings: Finding[] = [];
  for (const { pattern, what } of CITATIONS) {
    for (const match of text.matchAll(pattern)) {
      const named = what.replace('$1', (match[1] ?? '').toLowerCase());
      const quoted = match[0].replace(/\s+/g, ' ');
      findings.push({ path, line: lineOf(text, match.index, firstLine), message: `"${quoted}" cites ${named}, which a reader cannot open: state the rule` });
    }
  }
  return findings;
}

export function checkDatedFigures(path: string, comment: Comment): Finding[] {
  const findings: Finding[] = [];
  for (const date of comment.text.matchAll(DATE)) {
    const from = Math.max(0, date.index - DATE_REACH);
    const around = comment.text.slice(from, date.index + date[0].length + DATE_REACH);
    const figure = FIGURE.exec(around);
    if (figure) {
      findings.push({
        path,
        line: lineOf(comment.text, date.index, comment.line),
        message: `a dated figure ("${date[0]}" beside "${figure[0]}"): figures go to bench/results/, comments state the rule`,
      });
    }
  }
  return findings;
}

export function checkSize(path: string, bytes: number): Finding[] {
  const limit = SIZE_LIMITS.find((l) => l.pattern.test(path));
  if (!limit || bytes <= limit.bytes) return [];
  const kib = (n: number) => `${(n / KIB).toFixed(1)} KiB`;
  return [{ path, line: 1, message: `${kib(bytes)}, over the ${kib(limit.bytes)} allowed for ${limit.what}` }];
}

/** Every finding of one file, given its text. */
export function checkFile(path: string, text: string, index: PathIndex): Finding[] {
  if (path.endsWith('.md')) {
    return [...checkSize(path, Buffer.byteLength(text)), ...checkCitations(path, text, 1), ...checkPaths(path, text, 1, index, true)];
  }
  return commentsOf(path, text).flatMap((comment) => [
    ...checkCitations(path, comment.text, comment.line),
    ...checkDatedFigures(path, comment),
    ...(TEST_FILE.test(path) ? [] : checkPaths(path, comment.text, comment.line, index, false)),
  ]);
}
