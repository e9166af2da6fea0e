/**
 * What the normalizers share: the merged tree with its positions, the problems and warnings found
 * so far, the variable lookups and file access. Also the small readers every normalizer uses: the
 * schema has let the tree through, but after interpolation many fields may be strings ("3" for a
 * number), and a reader must never throw on an odd value: it records a located problem instead.
 */
import { parseDuration } from '../../base/duration.ts';
import type { Path, Problem, SourcePos } from '../../yaml/errors.ts';
import type { SourceMap } from '../../yaml/parse.ts';
import type { Lookup } from '../interpolate.ts';

export type Obj = Record<string, unknown>;

export interface FileAccess {
  /** The file's text, or undefined when it does not exist; throws when it is over the kind's size limit. */
  readFile(path: string, kind: 'compose' | 'env', shown: string): string | undefined;
}

export class NormalizeState {
  readonly problems: Problem[] = [];
  readonly warnings: string[] = [];

  constructor(
    readonly root: unknown,
    readonly sources: SourceMap,
    readonly projectDir: string,
    /** Shell, then .env, then stored secrets. */
    readonly lookup: Lookup,
    /** Shell, then .env: the local machine only. */
    readonly localLookup: Lookup,
    readonly files: FileAccess,
    /** How a path is shown in messages (relative to the working directory). */
    readonly display: (absolutePath: string) => string,
    readonly onUnset: (name: string) => void,
  ) {}

  at(path: Path, part: 'key' | 'value' = 'value'): SourcePos {
    return this.sources.locate(this.root, path, part);
  }

  fail(path: Path, message: string, part: 'key' | 'value' = 'value'): void {
    this.problems.push({ pos: this.at(path, part), path, message });
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  /** An integer from a number or a numeric string; records a problem and returns undefined otherwise. */
  int(value: unknown, path: Path, what = 'a whole number', min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n)) {
      this.fail(path, `must be ${what}, not ${show(value)}`);
      return undefined;
    }
    if (n < min || n > max) {
      this.fail(path, `must be ${what} between ${min} and ${max}, not ${n}`);
      return undefined;
    }
    return n;
  }

  /** A port number: 1..65535, in every notation (docs/compose.md, Validation). */
  port(value: unknown, path: Path): number | undefined {
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n)) {
      this.fail(path, `must be a port number, not ${show(value)}`);
      return undefined;
    }
    if (n < 1 || n > 65535) {
      this.fail(path, `port ${n} is out of range: ports are 1 to 65535`);
      return undefined;
    }
    return n;
  }

  bool(value: unknown, path: Path): boolean | undefined {
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
    this.fail(path, `must be true or false, not ${show(value)}`);
    return undefined;
  }

  /** A Go-style duration ("1m30s") in whole seconds, rounded up. */
  durationSeconds(value: unknown, path: Path, bareNumberIsSeconds = false): number | undefined {
    if (bareNumberIsSeconds && (typeof value === 'number' || (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)))) {
      const n = Number(value);
      if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
    }
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined || !Number.isFinite(ms)) {
      const example = bareNumberIsSeconds ? 'e.g. 10s, 1m30s, or a number of seconds' : 'e.g. 10s, 1m30s';
      this.fail(path, `invalid duration ${show(value)}: use a number with a unit (${example})`);
      return undefined;
    }
    return Math.ceil(ms / 1000);
  }

  /** A string, or a number/boolean written where a string was meant. */
  str(value: unknown, path: Path): string | undefined {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    this.fail(path, `must be a string, not ${show(value)}`);
    return undefined;
  }

  /** The string items of a list (one string is a list of one). */
  strings(value: unknown, path: Path): string[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      const s = this.str(value, path);
      return s === undefined ? [] : [s];
    }
    const out: string[] = [];
    value.forEach((v, i) => {
      const s = this.str(v, [...path, i]);
      if (s !== undefined) out.push(s);
    });
    return out;
  }
}

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An own field of a map: never something inherited from Object.prototype ("constructor"...). */
export function get(obj: unknown, key: string): unknown {
  return isObj(obj) && Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** A value as shown in a message: strings quoted, long values cut. */
export function show(value: unknown): string {
  let s: string;
  if (value === undefined) s = 'nothing';
  else if (value === null) s = 'empty';
  else if (typeof value === 'string') s = JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean') s = String(value);
  else s = Array.isArray(value) ? 'a list' : 'a map';
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/**
 * A `list_or_dict` (["K=V", "K"] or {K: V, K: null}) as [key, value, path] triples; a null value
 * means "no value given" (for environment: take it from the environment).
 */
export function keyValues(ctx: NormalizeState, value: unknown, path: Path): [string, string | null, Path][] {
  const out: [string, string | null, Path][] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const s = ctx.str(item, [...path, i]);
      if (s === undefined) return;
      const eq = s.indexOf('=');
      out.push(eq < 0 ? [s, null, [...path, i]] : [s.slice(0, eq), s.slice(eq + 1), [...path, i]]);
    });
  } else if (isObj(value)) {
    for (const key of Object.keys(value)) {
      const v = value[key];
      if (v === null || v === undefined) out.push([key, null, [...path, key]]);
      else {
        const s = ctx.str(v, [...path, key]);
        if (s !== undefined) out.push([key, s, [...path, key]]);
      }
    }
  }
  return out;
}
