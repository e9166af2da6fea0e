/**
 * The quick way to read a YAML document that is probably fine: js-yaml builds plain values
 * directly, with no document model kept in memory. On a generated 4 MB Compose file of 8,000
 * services it reads in 0.12 s what the yaml package's Document takes 2 s for, and it leaves the
 * heap small, which is what kept loading from growing in proportion to the file
 * (`bench/compose-translate.mjs`).
 *
 * Positions are not recorded here: parse.ts reads the file again the exact way the first time an
 * error or a warning needs one (SourceMap.defer). Whatever this reader refuses, or might read
 * differently from the exact way, returns UNREAD, and parse.ts reads the file the exact way at
 * once, so every error is worded and placed as before.
 */
import jsyaml from 'js-yaml';

/** Returned when the exact reader must decide (an error, or a form the two might read apart). */
export const UNREAD = Symbol('unread');

/**
 * YAML 1.2's core schema as the yaml package resolves it, plus merge keys (<<). js-yaml's own int
 * type also reads binary (0b101) as a number, where the yaml package keeps a string; so integers are
 * resolved here with the core schema's three forms only (decimal, 0o octal, 0x hexadecimal).
 */
const coreInt = new jsyaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data: string | null) => data !== null && /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/.test(data),
  construct: (data: string) => {
    if (data.startsWith('0o')) return Number.parseInt(data.slice(2), 8);
    if (data.startsWith('0x')) return Number.parseInt(data.slice(2), 16);
    return Number(data);
  },
  predicate: (v: unknown) => typeof v === 'number' && Number.isInteger(v),
});
/** What js-yaml 4.3 has and its published types (4.0) do not declare yet. */
const lib = jsyaml as typeof jsyaml & { types: Record<'null' | 'bool' | 'float' | 'merge', jsyaml.Type> };
type Limits = jsyaml.LoadOptions & { maxDepth: number; maxTotalMergeKeys: number };
const SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: [lib.types.null, lib.types.bool, coreInt, lib.types.float, lib.types.merge] });

/**
 * The values of a one-document YAML text, aliases expanded into their own copies (a later pass
 * may rewrite one copy in place), or UNREAD. `maxNodes` and `maxDepth` bound the expansion as the
 * exact reader does; going past them is UNREAD, and the exact reader says where.
 */
export function readQuickly(text: string, maxNodes: number, maxDepth: number): unknown {
  let value: unknown;
  try {
    // No cap on merge keys: each `<<` is counted by the node budget below instead (8,000 services
    // that each merge a common block are a real file, not an attack).
    const limits: Limits = { schema: SCHEMA, maxDepth, maxTotalMergeKeys: -1 };
    value = jsyaml.load(text, limits);
  } catch {
    return UNREAD;
  }
  const budget = { nodes: maxNodes };
  return unshare(value ?? null, new Set(), budget, 0, maxDepth);
}

/**
 * A copy where no object is reached twice: js-yaml hands out the anchored object itself for each
 * alias. Strings that a key or value of "<<" could come from are left to the exact reader, which
 * refuses a merge key outside a key's place; so are keys that came from a list or a map.
 */
function unshare(value: unknown, seen: Set<object>, budget: { nodes: number }, depth: number, maxDepth: number): unknown {
  if (--budget.nodes < 0 || depth > maxDepth) return UNREAD;
  if (value === '<<') return UNREAD;
  if (typeof value !== 'object' || value === null) return value;
  const shared = seen.has(value);
  seen.add(value);
  if (Array.isArray(value)) {
    const out = shared ? new Array<unknown>(value.length) : value;
    for (let i = 0; i < value.length; i++) {
      const item = unshare(value[i], seen, budget, depth + 1, maxDepth);
      if (item === UNREAD) return UNREAD;
      out[i] = item;
    }
    return out;
  }
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = shared ? {} : source;
  for (const key of Object.keys(source)) {
    if (key === '<<' || key.startsWith('[object ') || key.includes(',')) return UNREAD;
    const item = unshare(source[key], seen, budget, depth + 1, maxDepth);
    if (item === UNREAD) return UNREAD;
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, writable: true, enumerable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
