/**
 * Variable interpolation as the Compose Specification defines it:
 *   $NAME and ${NAME}          the value, or "" (with a warning) when unset
 *   ${NAME:-default}           default when unset or empty;  ${NAME-default}  when unset
 *   ${NAME:?message}           error when unset or empty;    ${NAME?message}  when unset
 *   ${NAME:+replacement}       replacement when set and non-empty; ${NAME+replacement} when set
 *   $$                         a literal $
 * Operands may themselves hold references (${A:-${B:-x}}); they are evaluated only when used.
 * A $ not followed by a name, "{" or "$" is kept as written; a malformed ${...} is an error.
 */
import type { Path, Problem } from '../yaml/errors.ts';
import type { SourceMap } from '../yaml/parse.ts';

/** Resolves a variable: its value, or undefined when it is not set. */
export type Lookup = (name: string) => string | undefined;

export class InterpolationError extends Error {}

type Operator = ':-' | '-' | ':?' | '?' | ':+' | '+';
type Part = string | { name: string; op?: Operator; operand?: Part[] };

const nameStart = /[_a-zA-Z]/;
const nameChar = /[_a-zA-Z0-9]/;
const operators: readonly Operator[] = [':-', ':?', ':+', '-', '?', '+'];

/** Parses `text` (from `start`, up to `end` exclusive) into literal text and references. */
function parseTemplate(text: string, start = 0, end = text.length): Part[] {
  const parts: Part[] = [];
  let literal = '';
  let i = start;
  while (i < end) {
    const c = text[i]!;
    if (c !== '$' || i + 1 >= end) {
      literal += c;
      i++;
      continue;
    }
    const next = text[i + 1]!;
    if (next === '$') {
      literal += '$';
      i += 2;
      continue;
    }
    if (nameStart.test(next)) {
      let j = i + 1;
      while (j < end && nameChar.test(text[j]!)) j++;
      if (literal) parts.push(literal);
      literal = '';
      parts.push({ name: text.slice(i + 1, j) });
      i = j;
      continue;
    }
    if (next !== '{') {
      literal += '$';
      i++;
      continue;
    }
    const close = matchingBrace(text, i + 2, end);
    if (close < 0) throw invalid(text.slice(i, end));
    const body = text.slice(i + 2, close);
    let j = 0;
    if (!nameStart.test(body[0] ?? '')) throw invalid(text.slice(i, close + 1));
    while (j < body.length && nameChar.test(body[j]!)) j++;
    const name = body.slice(0, j);
    if (literal) parts.push(literal);
    literal = '';
    if (j === body.length) {
      parts.push({ name });
    } else {
      const op = operators.find((o) => body.startsWith(o, j));
      if (!op) throw invalid(text.slice(i, close + 1));
      const operandStart = i + 2 + j + op.length;
      parts.push({ name, op, operand: parseTemplate(text, operandStart, close) });
    }
    i = close + 1;
  }
  if (literal) parts.push(literal);
  return parts;
}

/** Index of the "}" closing a "${" whose body starts at `from`, skipping nested ${...} and $$. */
function matchingBrace(text: string, from: number, end: number): number {
  let depth = 0;
  for (let i = from; i < end; i++) {
    const c = text[i];
    if (c === '$' && text[i + 1] === '$') {
      i++;
    } else if (c === '$' && text[i + 1] === '{') {
      depth++;
      i++;
    } else if (c === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

function invalid(fragment: string): InterpolationError {
  const shown = fragment.length > 60 ? `${fragment.slice(0, 57)}...` : fragment;
  return new InterpolationError(
    `invalid variable reference ${JSON.stringify(shown)}: use $NAME, \${NAME}, \${NAME:-default}, \${NAME:?message} (and $$ for a literal $)`,
  );
}

function evaluate(parts: readonly Part[], lookup: Lookup, onUnset: (name: string) => void): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'string') {
      out += p;
      continue;
    }
    const value = lookup(p.name);
    const operand = (): string => evaluate(p.operand ?? [], lookup, onUnset);
    switch (p.op) {
      case undefined:
        if (value === undefined) onUnset(p.name);
        out += value ?? '';
        break;
      case ':-':
        out += value === undefined || value === '' ? operand() : value;
        break;
      case '-':
        out += value === undefined ? operand() : value;
        break;
      case ':?':
      case '?':
        if (value === undefined || (p.op === ':?' && value === '')) {
          const message = operand();
          const state = value === undefined ? 'is not set' : 'is empty';
          throw new InterpolationError(`required variable ${p.name} ${state}${message ? `: ${message}` : ''}`);
        }
        out += value;
        break;
      case ':+':
        out += value !== undefined && value !== '' ? operand() : '';
        break;
      case '+':
        out += value !== undefined ? operand() : '';
        break;
    }
  }
  return out;
}

/**
 * Interpolates one string. Throws InterpolationError for a malformed reference or a required
 * variable that is missing; `onUnset` hears of every plain reference to an unset variable.
 */
export function interpolate(text: string, lookup: Lookup, onUnset: (name: string) => void = () => {}): string {
  if (!text.includes('$')) return text;
  return evaluate(parseTemplate(text), lookup, onUnset);
}

export interface TreeInterpolation {
  /** Variables for values: shell, then .env, then stored secrets. */
  readonly lookup: Lookup;
  /** Variables for values under `pathUsesLocal` paths: the local machine only (no secrets). */
  readonly localLookup: Lookup;
  /** True for paths whose values resolve from the local machine (build args). */
  readonly pathUsesLocal?: (path: Path) => boolean;
  /** Called once per variable referenced while unset. */
  readonly onUnset: (name: string) => void;
}

/**
 * Interpolates every string value of a parsed tree in place (keys are never interpolated, as the
 * specification says). Positions stay valid: the SourceMap is keyed by containers, which are
 * kept. Returns one problem per bad value.
 */
export function interpolateTree(root: unknown, sources: SourceMap, options: TreeInterpolation): Problem[] {
  const problems: Problem[] = [];
  const path: (string | number)[] = [];
  const visit = (container: Record<string, unknown> | unknown[]): void => {
    const keys: (string | number)[] = Array.isArray(container) ? container.map((_, i) => i) : Object.keys(container);
    for (const key of keys) {
      const value = (container as Record<string | number, unknown>)[key];
      path.push(key);
      if (typeof value === 'string') {
        if (value.includes('$')) {
          const lookup = options.pathUsesLocal?.(path) ? options.localLookup : options.lookup;
          try {
            (container as Record<string | number, unknown>)[key] = interpolate(value, lookup, options.onUnset);
          } catch (err) {
            if (!(err instanceof InterpolationError)) throw err;
            problems.push({ pos: sources.locate(root, path), path: [...path], message: err.message });
          }
        }
      } else if (typeof value === 'object' && value !== null) {
        visit(value as Record<string, unknown>);
      }
      path.pop();
    }
  };
  if (typeof root === 'object' && root !== null) visit(root as Record<string, unknown>);
  return problems;
}
