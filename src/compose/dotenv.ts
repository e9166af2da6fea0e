/**
 * The dotenv format of `.env` and `env_file` files, with the rules Docker Compose documents:
 * `# comments`, blank lines, an optional `export ` prefix, `KEY=VALUE` (or `KEY: VALUE`), a bare
 * `KEY` taking its value from the environment; unquoted values end at the line end or at " #" and
 * are trimmed; single quotes are literal; double quotes understand \n \r \t \\ \" \$ and may span
 * lines. Unquoted and double-quoted values are interpolated, single-quoted ones are not.
 */
import type { Problem, SourcePos } from '../yaml/errors.ts';
import { InterpolationError, interpolate, type Lookup } from './interpolate.ts';

export interface DotenvResult {
  /** Variables in file order; a later line overrides an earlier one. */
  readonly values: Map<string, string>;
  readonly problems: Problem[];
}

export interface DotenvOptions {
  /** Resolves references in values (and bare `KEY` lines); checked before the file's own earlier values. */
  readonly lookup?: Lookup;
  /** `raw`: every line is KEY=VALUE taken literally, as Compose's `format: raw`. */
  readonly format?: 'default' | 'raw';
  readonly onUnset?: (name: string) => void;
}

const keyChar = /[\p{L}\p{N}_.\-[\]]/u;
const escapes: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', f: '\f', v: '\v', '\\': '\\', '"': '"' };

export function parseDotenv(text: string, file: string, options: DotenvOptions = {}): DotenvResult {
  const values = new Map<string, string>();
  const problems: Problem[] = [];
  const outer = options.lookup ?? (() => undefined);
  const lookup: Lookup = (name) => outer(name) ?? values.get(name);
  const onUnset = options.onUnset ?? (() => {});
  // Offsets of line starts, to turn an offset into line:column.
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const posAt = (offset: number): SourcePos => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file, line: lo + 1, col: offset - lineStarts[lo]! + 1 };
  };
  const fail = (offset: number, message: string): void => {
    problems.push({ pos: posAt(offset), message });
  };
  const expand = (value: string, offset: number): string => {
    try {
      return interpolate(value, lookup, onUnset);
    } catch (err) {
      if (!(err instanceof InterpolationError)) throw err;
      fail(offset, err.message);
      return '';
    }
  };

  let i = 0;
  const n = text.length;
  const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v';
  const lineEnd = (from: number): number => {
    const e = text.indexOf('\n', from);
    return e < 0 ? n : e;
  };
  while (i < n) {
    while (i < n && (isBlank(text[i]) || text[i] === '\n')) i++;
    if (i >= n) break;
    if (text[i] === '#') {
      i = lineEnd(i) + 1;
      continue;
    }
    const statement = i;
    if (options.format !== 'raw' && /^export[ \t]+/.test(text.slice(i, i + 12))) {
      i += 6;
      while (isBlank(text[i])) i++;
    }
    const keyStart = i;
    while (i < n && keyChar.test(text[i]!)) i++;
    const key = text.slice(keyStart, i);
    while (isBlank(text[i])) i++;
    const sep = text[i];
    if (key === '' || (sep !== undefined && sep !== '\n' && sep !== '=' && !(sep === ':' && options.format !== 'raw'))) {
      const bad = sep === undefined || key === '' ? text.slice(statement, lineEnd(statement)) : sep;
      fail(
        i < n && key !== '' ? i : statement,
        `unexpected ${key === '' ? 'line' : 'character'} ${JSON.stringify(bad.trim())} in env file (expected KEY=VALUE)`,
      );
      i = lineEnd(i) + 1;
      continue;
    }
    if (sep === undefined || sep === '\n') {
      // A bare KEY takes its value from the environment, and is left out when that has none.
      const v = outer(key);
      if (v !== undefined) values.set(key, v);
      i++;
      continue;
    }
    i++;
    while (isBlank(text[i])) i++;
    if (options.format === 'raw') {
      const e = lineEnd(i);
      values.set(key, text.slice(i, e).replace(/\r$/, ''));
      i = e + 1;
      continue;
    }
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      const open = i;
      let raw = '';
      let j = i + 1;
      let closed = false;
      for (; j < n; j++) {
        const c = text[j]!;
        if (c === '\\' && j + 1 < n) {
          const d = text[j + 1]!;
          if (d === quote) raw += d;
          else raw += `\\${d}`;
          j++;
          continue;
        }
        if (c === quote) {
          closed = true;
          break;
        }
        raw += c;
      }
      if (!closed) {
        fail(open, `unterminated quoted value for ${key}`);
        break;
      }
      let value = raw;
      if (quote === '"') {
        // `\$` keeps a literal dollar: it becomes `$$` before interpolation.
        const unescaped = raw.replace(/\\(.)/g, (m, c: string) => (c === '$' ? '$$' : (escapes[c] ?? m)));
        value = expand(unescaped, open);
      }
      values.set(key, value);
      i = j + 1;
      while (isBlank(text[i])) i++;
      if (i < n && text[i] !== '\n' && text[i] !== '#') {
        fail(i, `unexpected text after the quoted value of ${key}`);
      }
      i = lineEnd(i) + 1;
      continue;
    }
    const e = lineEnd(i);
    let value = text.slice(i, e);
    const comment = value.search(/[ \t]#/);
    if (comment >= 0) value = value.slice(0, comment);
    values.set(key, expand(value.replace(/[ \t\r]+$/, ''), i));
    i = e + 1;
  }
  return { values, problems };
}
