// The comments of a source file, found by a scanner of its language: TypeScript and JavaScript
// through the TypeScript parser (so a `//` inside a string, a template or a regular expression is no
// comment), Go by its own small scanner, and the languages whose comments start with `#` line by
// line. Files of any other kind have no comments here. Comments on consecutive lines are one
// comment, so a phrase or a sentence wrapped across `//` lines is read whole.
import ts from 'typescript';

/** One comment: its text as written (markers included) and the line it starts on (1-based). */
export interface Comment {
  line: number;
  text: string;
}

export type CommentSyntax = 'typescript' | 'go' | 'hash' | 'none';

/** Where a comment is in its file: [start, end) offsets. */
type Range = [number, number];

const TYPESCRIPT = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;
const HASH = /(\.(sh|bash|yaml|yml|conf|tpl|env|dockerignore|gitignore|shellcheckrc)|(^|\/)(Dockerfile|\.ci\/run))$/;

/** Which scanner reads a file, by its name; a file that starts with a shell's `#!` is a shell script. */
export function commentSyntax(path: string, text: string): CommentSyntax {
  if (TYPESCRIPT.test(path)) return 'typescript';
  if (path.endsWith('.go') || path.endsWith('go.mod')) return 'go';
  if (HASH.test(path) || /^#!.*\b(ba)?sh\b/.test(text)) return 'hash';
  return 'none';
}

export function commentsOf(path: string, text: string): Comment[] {
  const syntax = commentSyntax(path, text);
  if (syntax === 'none') return [];
  const ranges = syntax === 'typescript' ? typescriptComments(path, text) : syntax === 'go' ? goComments(text) : hashComments(text);
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineAt = (offset: number) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  };
  return joinConsecutive(text, ranges).map(([start, end]) => ({ line: lineAt(start), text: text.slice(start, end) }));
}

/** Ranges in order, those separated by one line break and blanks made one. */
function joinConsecutive(text: string, ranges: Range[]): Range[] {
  const joined: Range[] = [];
  for (const range of [...ranges].sort(([a], [b]) => a - b)) {
    const last = joined.at(-1);
    if (last && /^[ \t]*\r?\n[ \t]*$/.test(text.slice(last[1], range[0]))) last[1] = range[1];
    else joined.push([...range]);
  }
  return joined;
}

/**
 * Every comment in the trivia before and after each node of the parsed file. A node's span starts
 * with the trivia before it, so the trivia after one node is before the next; the same-line part
 * of trivia is what TypeScript calls trailing, the rest leading.
 */
function typescriptComments(path: string, text: string): Range[] {
  const kind = /\.(js|mjs|cjs)$/.test(path) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const ranges = new Map<number, number>();
  const add = (found: ts.CommentRange[] | undefined) => {
    for (const r of found ?? []) ranges.set(r.pos, r.end);
  };
  const visit = (node: ts.Node) => {
    for (const at of [node.pos, node.end]) {
      add(ts.getLeadingCommentRanges(text, at));
      add(ts.getTrailingCommentRanges(text, at));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...ranges];
}

/** Go: `//` and `/* *\/` comments outside interpreted ("..."), raw (`...`) and rune ('.') literals. */
function goComments(text: string): Range[] {
  const out: Range[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out.push([i, stop]);
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out.push([i, stop]);
      i = stop;
    } else if (c === '`') {
      const end = text.indexOf('`', i + 1);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
      i++;
    } else {
      i++;
    }
  }
  return out;
}

/**
 * `#` comments: a `#` at the start of a line or after a blank, outside single and double quotes
 * opened on the same line (so `$#`, `${#x}` and `'#'` are not comments). A line's quote state is
 * its own: a quoted string over several lines may hide a comment, never make one up.
 */
function hashComments(text: string): Range[] {
  const out: Range[] = [];
  let lineStart = 0;
  for (const line of text.split('\n')) {
    let quote = '';
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (quote) {
        if (c === '\\' && quote === '"') i++;
        else if (c === quote) quote = '';
      } else if (c === '\\') {
        i++;
      } else if (c === '"' || c === "'") {
        quote = c;
      } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) {
        out.push([lineStart + i, lineStart + line.length]);
        break;
      }
    }
    lineStart += line.length + 1;
  }
  return out;
}
