/**
 * Typed decoders for the manifest: each one both checks a parsed YAML value (recording located
 * problems) and describes itself as JSON Schema. The decoders are the single source of truth: the
 * published schema (schema/devtool-manifest.schema.json) is generated from them, so the loader and
 * what editors complete can never drift apart (a unit test compares the file with the generator).
 *
 * A decoder returns undefined when it recorded a problem; callers keep going so that one load
 * reports every mistake, and the first (in file order) becomes the error line.
 */
import { parseDuration } from '../base/duration.ts';
import { InterpolationError, interpolate, type Lookup } from '../compose/interpolate.ts';
import { formatPath as pathText, type Path, type Problem } from '../yaml/errors.ts';
import type { SourceMap } from '../yaml/parse.ts';
import type { ProjectScope } from './project-scope.ts';
import { didYouMean } from '../base/suggest.ts';

export type JsonSchema = Record<string, unknown>;

/** Names of images, services and dependencies: they become parts of object and variable names. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const NAME_RULE = 'use letters, digits, ".", "_" and "-", starting with a letter or digit';

/** What a decode pass shares: where values came from, the problems found, variables for ${VAR}. */
export class Cursor {
  readonly problems: Problem[] = [];
  readonly unset = new Set<string>();

  constructor(
    readonly root: unknown,
    readonly sources: SourceMap,
    readonly lookup: Lookup,
    /** Where the file is: which sync folders are inside the project (none checked without it). */
    readonly scope?: ProjectScope,
  ) {}

  fail(path: Path, message: string, at: 'key' | 'value' = 'value', namesField = false): undefined {
    const pos = this.sources.locate(this.root, path, at);
    this.problems.push(namesField ? { pos, message } : { pos, path: [...path], message });
    return undefined;
  }

  /** ${VAR} expansion, as Okteto expands manifest values from the environment. */
  expand(text: string, path: Path): string | undefined {
    try {
      return interpolate(text, this.lookup, (name) => this.unset.add(name));
    } catch (err) {
      if (err instanceof InterpolationError) return this.fail(path, err.message);
      throw err;
    }
  }
}

export interface Decoder<T> {
  readonly schema: JsonSchema;
  /** Words for type errors: "a string", "a map"... */
  readonly expected: string;
  decode(value: unknown, path: Path, c: Cursor): T | undefined;
}

const withDescription = (schema: JsonSchema, description?: string): JsonSchema => (description ? { description, ...schema } : schema);

export function typeName(value: unknown): string {
  if (value === null) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  return `${typeof value === 'number' ? 'the number' : 'the value'} ${String(value)}`;
}

function mismatch(expected: string, value: unknown, path: Path, c: Cursor): undefined {
  return c.fail(path, `must be ${expected}, not ${typeName(value)}`);
}

export interface StringOptions {
  description?: string;
  /** Expand ${VAR} from the environment (default true; commands leave it to their shell). */
  expand?: boolean;
  /** Accept numbers and booleans as text (environment values, build args). */
  scalars?: boolean;
  enum?: readonly string[];
  /** A check of the value: a message when it is wrong. */
  check?: (value: string) => string | undefined;
  examples?: readonly string[];
  /** For the schema only (editors); the decoder's `check` gives the located message. */
  pattern?: string;
}

export function str(opts: StringOptions = {}): Decoder<string> {
  const type = opts.scalars ? ['string', 'number', 'boolean'] : 'string';
  return {
    schema: withDescription(
      {
        type,
        ...(opts.enum ? { enum: [...opts.enum] } : {}),
        ...(opts.pattern ? { pattern: opts.pattern } : {}),
        ...(opts.examples ? { examples: [...opts.examples] } : {}),
      },
      opts.description,
    ),
    expected: opts.enum ? `one of ${opts.enum.map((e) => JSON.stringify(e)).join(', ')}` : 'a string',
    decode(value, path, c) {
      let text: string;
      if (typeof value === 'string') text = value;
      else if (opts.scalars && (typeof value === 'number' || typeof value === 'boolean')) text = String(value);
      else return mismatch('a string', value, path, c);
      const expanded = opts.expand === false ? text : c.expand(text, path);
      if (expanded === undefined) return undefined;
      if (opts.enum && !opts.enum.includes(expanded))
        return c.fail(path, `must be ${this.expected}, not ${JSON.stringify(expanded)}${didYouMean(expanded, opts.enum)}`);
      const problem = opts.check?.(expanded);
      return problem ? c.fail(path, problem) : expanded;
    },
  };
}

export function bool(description?: string): Decoder<boolean> {
  return {
    schema: withDescription({ type: 'boolean' }, description),
    expected: 'true or false',
    decode(value, path, c) {
      if (typeof value === 'boolean') return value;
      // "${FLAG}" expanded to true/false is what users write in templated manifests.
      if (typeof value === 'string') {
        const text = c.expand(value, path);
        if (text === 'true' || text === 'false') return text === 'true';
        if (text === undefined) return undefined;
      }
      return mismatch('true or false', value, path, c);
    },
  };
}

export function int(opts: { description?: string; min?: number; max?: number } = {}): Decoder<number> {
  return {
    schema: withDescription(
      { type: 'integer', ...(opts.min !== undefined ? { minimum: opts.min } : {}), ...(opts.max !== undefined ? { maximum: opts.max } : {}) },
      opts.description,
    ),
    expected: 'an integer',
    decode(value, path, c) {
      if (typeof value !== 'number' || !Number.isInteger(value)) return mismatch('an integer', value, path, c);
      if ((opts.min !== undefined && value < opts.min) || (opts.max !== undefined && value > opts.max)) {
        return c.fail(path, `must be between ${opts.min ?? '-∞'} and ${opts.max ?? '∞'}, not ${value}`);
      }
      return value;
    },
  };
}

/** A Go-style duration ("5m", "1h30m"); decoded to milliseconds. */
export function duration(description?: string): Decoder<number> {
  return {
    schema: withDescription({ type: 'string', pattern: '^([0-9]+(\\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$|^0$' }, description),
    expected: 'a duration',
    decode(value, path, c) {
      if (typeof value !== 'string') return mismatch('a duration such as "5m" or "90s"', value, path, c);
      const text = c.expand(value, path);
      if (text === undefined) return undefined;
      const ms = parseDuration(text);
      return ms === undefined ? c.fail(path, `must be a duration with a unit such as "5m" or "90s", not ${JSON.stringify(text)}`) : ms;
    },
  };
}

export function list<T>(item: Decoder<T>, description?: string): Decoder<T[]> {
  return {
    schema: withDescription({ type: 'array', items: item.schema }, description),
    expected: 'a list',
    decode(value, path, c) {
      if (!Array.isArray(value)) return mismatch('a list', value, path, c);
      const out: T[] = [];
      value.forEach((v, i) => {
        const d = item.decode(v, [...path, i], c);
        if (d !== undefined) out.push(d);
      });
      return out;
    },
  };
}

/** A map with names chosen by the user (images, services, variables). */
export function record<T>(value: Decoder<T>, opts: { description?: string; keyPattern?: RegExp; keyRule?: string } = {}): Decoder<Record<string, T>> {
  return {
    schema: withDescription(
      opts.keyPattern
        ? { type: 'object', propertyNames: { pattern: opts.keyPattern.source }, additionalProperties: value.schema }
        : { type: 'object', additionalProperties: value.schema },
      opts.description,
    ),
    expected: 'a map',
    decode(input, path, c) {
      if (!isMap(input)) return mismatch('a map', input, path, c);
      const out: Record<string, T> = {};
      for (const [k, v] of Object.entries(input)) {
        if (opts.keyPattern && !opts.keyPattern.test(k)) {
          c.fail(
            [...path, k],
            `invalid name ${JSON.stringify(k)} in ${pathText(path)}: ${opts.keyRule ?? `must match ${opts.keyPattern.source}`}`,
            'key',
            true,
          );
          continue;
        }
        const d = value.decode(v, [...path, k], c);
        if (d !== undefined) Object.defineProperty(out, k, { value: d, enumerable: true, writable: true, configurable: true });
      }
      return out;
    },
  };
}

export interface FieldSpec {
  readonly decoder: Decoder<unknown>;
  readonly required?: boolean;
}

type Decoded<F extends Record<string, FieldSpec>> = { [K in keyof F]?: F[K]['decoder'] extends Decoder<infer T> ? T : never };

/**
 * A map with known fields: an unknown field is a problem pointing at its key, with the closest
 * known name suggested; a missing required field points at the map.
 */
export function object<F extends Record<string, FieldSpec>>(
  fields: F,
  opts: { description?: string; title?: string } = {},
): Decoder<Decoded<F>> & { readonly fields: F } {
  const required = Object.keys(fields).filter((k) => fields[k]!.required);
  return {
    fields,
    schema: {
      ...(opts.title ? { title: opts.title } : {}),
      ...withDescription({ type: 'object', properties: Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.decoder.schema])) }, opts.description),
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    },
    expected: 'a map',
    decode(input, path, c) {
      if (!isMap(input)) return mismatch('a map', input, path, c);
      const out: Record<string, unknown> = {};
      let ok = true;
      for (const [k, v] of Object.entries(input)) {
        const field = Object.hasOwn(fields, k) ? fields[k] : undefined;
        if (!field) {
          const where = path.length === 0 ? 'unknown top-level field' : 'unknown field';
          const inPart = path.length === 0 ? '' : ` in ${pathText(path)}`;
          c.fail([...path, k], `${where} ${JSON.stringify(k)}${inPart}${didYouMean(k, Object.keys(fields))}`, 'key', true);
          ok = false;
          continue;
        }
        // An empty value (`image:`) is the same as leaving the field out.
        if (v === null) continue;
        const d = field.decoder.decode(v, [...path, k], c);
        if (d === undefined) ok = false;
        else out[k] = d;
      }
      for (const k of required) {
        if (input[k] === undefined || input[k] === null) {
          c.fail(path, `missing required field ${JSON.stringify(k)}${path.length ? ` in ${pathText(path)}` : ''}`, 'value', true);
          ok = false;
        }
      }
      return ok ? (out as Decoded<F>) : undefined;
    },
  };
}

/** One of several shapes, told apart by the value's type (a string, a list or a map). */
export function shapes<T>(
  branches: { string?: Decoder<T>; list?: Decoder<T>; map?: Decoder<T>; boolean?: Decoder<T>; number?: Decoder<T> },
  description?: string,
): Decoder<T> {
  const all = Object.values(branches) as Decoder<T>[];
  const expected = all
    .map((b) => b.expected)
    .join(' or ')
    .replace(/ or (?=[\s\S]* or )/g, ', ');
  return {
    schema: withDescription({ oneOf: all.map((b) => b.schema) }, description),
    expected,
    decode(value, path, c) {
      const branch =
        typeof value === 'string'
          ? branches.string
          : Array.isArray(value)
            ? branches.list
            : isMap(value)
              ? branches.map
              : typeof value === 'boolean'
                ? branches.boolean
                : typeof value === 'number'
                  ? branches.number
                  : undefined;
      return branch ? branch.decode(value, path, c) : mismatch(expected, value, path, c);
    },
  };
}

/** A decoder whose result is transformed (normalized shapes, defaults). */
export function map<A, B>(d: Decoder<A>, f: (a: A, path: Path, c: Cursor) => B | undefined): Decoder<B> {
  return {
    schema: d.schema,
    expected: d.expected,
    decode: (v, p, c) => {
      const a = d.decode(v, p, c);
      return a === undefined ? undefined : f(a, p, c);
    },
  };
}

/** `KEY: value` maps, or lists of `KEY=value` (Compose and Okteto accept both for environments and args). */
export function keyValues(description: string): Decoder<Record<string, string>> {
  const asMap = record(str({ scalars: true }));
  const asList = map(list(str({ scalars: true, check: (s) => (/^[^=\s]+(=|$)/.test(s) ? undefined : 'must be KEY=VALUE') })), (items, _path, c) => {
    const out: Record<string, string> = {};
    for (const item of items) {
      const eq = item.indexOf('=');
      // A bare KEY takes its value from the environment, as in Compose.
      if (eq === -1) out[item] = c.lookup(item) ?? '';
      else out[item.slice(0, eq)] = item.slice(eq + 1);
    }
    return out;
  });
  return shapes({ map: asMap, list: asList }, description);
}

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
