/**
 * Compiles the extended Compose schema into standalone validation code (ajv "standalone" mode).
 * Compiling the 90 kB schema takes 300-400 ms, which every `deploy` would pay at start; loading
 * the generated code takes about 20 ms. The generated file is committed; a unit test fails when it
 * no longer matches the schema (fingerprint below), and scripts/update-compose-schema.sh, or
 * `node --import tsx scripts/compile-compose-schema.ts`, regenerates it.
 */
import { createHash } from 'node:crypto';
import { extendComposeSchema, type JsonSchema } from './extend.ts';

/** The schema the validator is compiled from: the extended schema without its prose. */
export function schemaForValidation(): JsonSchema {
  return stripAnnotations(extendComposeSchema()) as JsonSchema;
}

/** A short fingerprint of the schema, written into the generated file. */
export function schemaFingerprint(schema: JsonSchema = schemaForValidation()): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 16);
}

// Descriptions and deprecation notes only make the generated code bigger (ajv embeds the schema
// nodes for error reporting); `title` likewise. Property *names* that happen to be "description"
// (a field of some Compose objects) are kept: only annotation values, which are strings or
// booleans, are removed.
function stripAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripAnnotations);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'description' || k === 'title' || k === 'deprecated') && typeof v !== 'object') continue;
    out[k] = k === 'properties' || k === 'patternProperties' || k === '$defs' ? mapValues(v, stripAnnotations) : stripAnnotations(v);
  }
  return out;
}

function mapValues(obj: unknown, f: (v: unknown) => unknown): unknown {
  if (typeof obj !== 'object' || obj === null) return obj;
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, f(v)]));
}
