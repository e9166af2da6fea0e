/**
 * Validates a parsed Compose tree against the Compose Specification schema (plus devtool's
 * extensions) with ajv, and turns ajv's errors into located problems worded for people.
 *
 * ajv reports every failed branch of every oneOf; printing them all would bury the real mistake.
 * Errors are grouped by the field they are about (services.web.ports, services.web.imgae...), and
 * in each group the most specific one is kept: the deepest, then a named mistake (unknown field,
 * bad value) over a type mismatch, and type mismatches at one place are merged ("must be a string
 * or a list").
 */
import type { ErrorObject } from 'ajv';
import type { Path, Problem } from '../../yaml/errors.ts';
import { formatPath } from '../../yaml/errors.ts';
import type { SourceMap } from '../../yaml/parse.ts';
import { didYouMean } from '../../base/suggest.ts';
import { schemaForValidation } from './compile.ts';
import type { JsonSchema } from './extend.ts';
// Precompiled by scripts/compile-compose-schema.ts (compiling at run time costs 300-400 ms).
import validate from './validate.generated.cjs';

let schemaCache: JsonSchema | undefined;
/** The schema the validator was compiled from, to look up field names for suggestions. */
function schema(): JsonSchema {
  schemaCache ??= schemaForValidation();
  return schemaCache;
}

interface Candidate {
  readonly path: Path;
  readonly keyword: string;
  readonly message: string;
  /** Whether the message names the field itself (unknown fields): then no "field X:" prefix. */
  readonly namesField: boolean;
  readonly pointAtKey: boolean;
  readonly types?: readonly string[];
}

/** Problems of `root` against the Compose schema; empty when valid. */
export function validateComposeSchema(root: unknown, sources: SourceMap): Problem[] {
  if (validate(root)) return [];
  const errors = validate.errors ?? [];
  const candidates = errors.map((e) => toCandidate(e, root, schema())).filter((c): c is Candidate => c !== undefined);
  if (candidates.length === 0 && errors[0]) {
    // Only summary errors (a oneOf matched by two branches...): report the first as ajv words it.
    const path = pointerToPath(errors[0].instancePath, root);
    return [{ pos: sources.locate(root, path), path, message: errors[0].message ?? 'is not valid' }];
  }
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const key = JSON.stringify(c.path.slice(0, 3));
    const list = groups.get(key);
    if (list) list.push(c);
    else groups.set(key, [c]);
  }
  const problems: Problem[] = [];
  for (const group of groups.values()) {
    const best = mostSpecific(group);
    const pos = sources.locate(root, best.path, best.pointAtKey ? 'key' : 'value');
    problems.push(best.namesField ? { pos, message: best.message } : { pos, path: best.path, message: best.message });
  }
  return problems;
}

function mostSpecific(group: readonly Candidate[]): Candidate {
  const depth = Math.max(...group.map((c) => c.path.length));
  const deepest = group.filter((c) => c.path.length === depth);
  const named = deepest.find((c) => c.keyword !== 'type');
  if (named) return named;
  const types = [...new Set(deepest.flatMap((c) => c.types ?? []))];
  return { ...deepest[0]!, message: `must be ${describeTypes(types)}` };
}

const typeWords: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'a map',
  array: 'a list',
  null: 'empty',
};

function describeTypes(types: readonly string[]): string {
  // "a number" already covers "an integer".
  const shown = types.includes('number') ? types.filter((t) => t !== 'integer') : types;
  const words = shown.map((t) => typeWords[t] ?? t);
  if (words.length <= 1) return words[0] ?? 'something else';
  return `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

function toCandidate(e: ErrorObject, root: unknown, rootSchema: JsonSchema): Candidate | undefined {
  const path = pointerToPath(e.instancePath, root);
  const params = e.params as Record<string, unknown>;
  const parent = (e.parentSchema ?? {}) as JsonSchema;
  const base = { keyword: e.keyword, namesField: false, pointAtKey: false };
  switch (e.keyword) {
    case 'oneOf':
    case 'anyOf':
    case 'allOf':
    case 'if':
    case 'then':
    case 'else':
      // Summaries of the branch errors, which are reported themselves.
      return undefined;
    case 'unevaluatedProperties':
    case 'additionalProperties': {
      const prop = String(params['unevaluatedProperty'] ?? params['additionalProperty']);
      const known = knownProperties(parent, rootSchema);
      // A property the schema knows but ajv calls "unevaluated": its own check failed, which drops
      // its annotation (JSON Schema 2020 rules); that failure is reported on its own.
      if (e.keyword === 'unevaluatedProperties' && (known.has(prop) || prop.startsWith('x-'))) return undefined;
      const fieldPath = [...path, prop];
      const namePattern = entityPattern(parent);
      if (namePattern) {
        return {
          ...base,
          path: fieldPath,
          pointAtKey: true,
          namesField: true,
          message: `invalid name ${JSON.stringify(prop)} in ${formatPath(path)}: use letters, digits, ".", "_" and "-"`,
        };
      }
      const where = path.length === 0 ? 'unknown top-level key' : 'unknown field';
      const inPart = path.length === 0 ? '' : ` in ${formatPath(path)}`;
      const hint = didYouMean(prop, known);
      const xHint = path.length === 0 && !hint ? ' (extension keys start with "x-")' : '';
      return { ...base, path: fieldPath, pointAtKey: true, namesField: true, message: `${where} ${JSON.stringify(prop)}${inPart}${hint}${xHint}` };
    }
    case 'type': {
      const t = params['type'];
      const types = Array.isArray(t) ? t.map(String) : String(t).split(',');
      return { ...base, path, types, message: `must be ${describeTypes(types)}` };
    }
    case 'enum': {
      const allowed = ((params['allowedValues'] as unknown[] | undefined) ?? []).map(String);
      const value = valueAt(root, path);
      const hint = typeof value === 'string' ? didYouMean(value, allowed) : '';
      return { ...base, path, message: `must be one of ${allowed.join(', ')}${hint}` };
    }
    case 'required':
      return { ...base, path, message: `missing required field ${JSON.stringify(String(params['missingProperty']))}` };
    case 'uniqueItems':
      return { ...base, path, message: `items ${params['j']} and ${params['i']} are the same; list each value once` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { ...base, path, message: `must be ${params['comparison']} ${params['limit']}` };
    default:
      return { ...base, path, message: e.message ?? `is not valid (${e.keyword})` };
  }
}

/** For maps of named things (services, volumes...): the pattern names must match. */
function entityPattern(parent: JsonSchema): string | undefined {
  const patterns = Object.keys((parent['patternProperties'] as JsonSchema | undefined) ?? {});
  return patterns.find((p) => p !== '^x-' && p !== '.+' && p !== '^.+$');
}

/** The property names a schema node allows, following $ref and allOf/anyOf/oneOf. */
function knownProperties(node: JsonSchema, root: JsonSchema, seen = new Set<JsonSchema>()): Set<string> {
  const out = new Set<string>();
  if (seen.has(node)) return out;
  seen.add(node);
  for (const k of Object.keys((node['properties'] as JsonSchema | undefined) ?? {})) out.add(k);
  const ref = node['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
    const target = ((root['$defs'] as JsonSchema)[ref.slice('#/$defs/'.length)] ?? {}) as JsonSchema;
    for (const k of knownProperties(target, root, seen)) out.add(k);
  }
  for (const combo of ['allOf', 'anyOf', 'oneOf']) {
    for (const sub of (node[combo] as JsonSchema[] | undefined) ?? []) for (const k of knownProperties(sub, root, seen)) out.add(k);
  }
  return out;
}

/** "/services/web/ports/0" to ['services', 'web', 'ports', 0], indexes as numbers where the data has lists. */
function pointerToPath(pointer: string, root: unknown): Path {
  if (pointer === '') return [];
  const out: (string | number)[] = [];
  let cur: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      const i = Number(seg);
      out.push(i);
      cur = cur[i];
    } else {
      out.push(seg);
      cur = typeof cur === 'object' && cur !== null && Object.hasOwn(cur, seg) ? (cur as Record<string, unknown>)[seg] : undefined;
    }
  }
  return out;
}

function valueAt(root: unknown, path: Path): unknown {
  let cur = root;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, p)) return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}
