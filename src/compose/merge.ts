/**
 * Merging several Compose files (`--file a.yaml --file b.yaml`): later files override earlier
 * ones with the rules Docker Compose applies (compose-go's override package):
 *   - maps merge key by key, a scalar replaces a scalar;
 *   - command, entrypoint and healthcheck.test are replaced whole;
 *   - environment, labels, annotations, build.args, sysctls, deploy.labels and volume labels merge
 *     by variable/label name, whichever notation (list or map) each file used;
 *   - depends_on merges by service name (a list means condition service_started);
 *   - a service's volumes merge by container path (the later mount wins);
 *   - other lists (ports, expose, env_file, cap_add, dns...) are concatenated without duplicates.
 * Positions are carried over, so an error found after the merge still names the file and line
 * that set the value.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Path } from '../yaml/errors.ts';
import { define, type SourceMap } from '../yaml/parse.ts';

type Obj = Record<string, unknown>;

const replaced = ['services.*.command', 'services.*.entrypoint', 'services.*.healthcheck.test'];
const keyValue = [
  'services.*.environment',
  'services.*.labels',
  'services.*.annotations',
  'services.*.build.args',
  'services.*.build.labels',
  'services.*.sysctls',
  'services.*.deploy.labels',
  'volumes.*.labels',
];

function matches(path: Path, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    const parts = p.split('.');
    return parts.length === path.length && parts.every((part, i) => part === '*' || part === path[i]);
  });
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Merges `override` onto `base` (neither is modified) and returns the result. */
export function mergeComposeTrees(base: unknown, override: unknown, sources: SourceMap): unknown {
  return merge(base, override, [], sources);
}

function merge(base: unknown, over: unknown, path: Path, sources: SourceMap): unknown {
  if (over === null || over === undefined) return base;
  if (base === null || base === undefined) return over;
  if (matches(path, replaced)) return over;
  if (matches(path, keyValue)) return mergeMaps(toKeyValueMap(base, sources), toKeyValueMap(over, sources), path, sources);
  if (path.length === 3 && path[0] === 'services' && path[2] === 'depends_on') {
    return mergeMaps(toDependsMap(base, sources), toDependsMap(over, sources), path, sources);
  }
  if (path.length === 3 && path[0] === 'services' && path[2] === 'volumes' && Array.isArray(base) && Array.isArray(over)) {
    return mergeMounts(base, over, sources);
  }
  if (path.length === 3 && path[0] === 'services' && path[2] === 'env_file') {
    return concat(toList(base, sources), toList(over, sources), sources);
  }
  if (isObj(base) && isObj(over)) return mergeMaps(base, over, path, sources);
  if (Array.isArray(base) && Array.isArray(over)) return concat(base, over, sources);
  return over;
}

function mergeMaps(base: Obj, over: Obj, path: Path, sources: SourceMap): Obj {
  const out: Obj = {};
  sources.setContainer(out, sources.containerPos(base) ?? sources.fallback);
  for (const key of Object.keys(base)) {
    define(out, key, base[key]);
    sources.copyEntry(base, key, out);
  }
  for (const key of Object.keys(over)) {
    if (Object.hasOwn(out, key)) {
      const merged = merge(out[key], over[key], [...path, key], sources);
      define(out, key, merged);
      // The position follows the value: the override's when it replaced or extended the base's.
      if (merged !== base[key]) sources.copyEntry(over, key, out);
    } else {
      define(out, key, over[key]);
      sources.copyEntry(over, key, out);
    }
  }
  return out;
}

function concat(base: readonly unknown[], over: readonly unknown[], sources: SourceMap): unknown[] {
  const out: unknown[] = [];
  sources.setContainer(out, sources.containerPos(base) ?? sources.fallback);
  const add = (from: readonly unknown[], i: number): void => {
    if (out.some((v) => isDeepStrictEqual(v, from[i]))) return;
    sources.copyEntry(from, i, out, out.length);
    out.push(from[i]);
  };
  base.forEach((_, i) => {
    add(base, i);
  });
  over.forEach((_, i) => {
    add(over, i);
  });
  return out;
}

/** Mounts keyed by container path: a later mount of the same path replaces the earlier one. */
function mergeMounts(base: readonly unknown[], over: readonly unknown[], sources: SourceMap): unknown[] {
  const targetOf = (v: unknown): string | undefined => {
    if (typeof v === 'string') {
      const parts = v.split(':');
      return parts.length === 1 ? parts[0] : parts[1];
    }
    return isObj(v) && typeof v['target'] === 'string' ? v['target'] : undefined;
  };
  const overTargets = new Set(over.map(targetOf).filter((t) => t !== undefined));
  const kept = base.map((v, i) => ({ v, i })).filter(({ v }) => !overTargets.has(targetOf(v) as string));
  const out: unknown[] = [];
  sources.setContainer(out, sources.containerPos(base) ?? sources.fallback);
  for (const { v, i } of kept) {
    sources.copyEntry(base, i, out, out.length);
    out.push(v);
  }
  over.forEach((v, i) => {
    sources.copyEntry(over, i, out, out.length);
    out.push(v);
  });
  return out;
}

function toList(v: unknown, sources: SourceMap): readonly unknown[] {
  if (Array.isArray(v)) return v;
  const out = [v];
  sources.setContainer(out, sources.fallback);
  return out;
}

/** ["A=1", "B"] to {A: "1", B: null}; a map is returned as is. */
function toKeyValueMap(v: unknown, sources: SourceMap): Obj {
  if (isObj(v)) return v;
  const out: Obj = {};
  if (!Array.isArray(v)) return out;
  sources.setContainer(out, sources.containerPos(v) ?? sources.fallback);
  v.forEach((item, i) => {
    if (typeof item !== 'string') return;
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    define(out, key, eq < 0 ? null : item.slice(eq + 1));
    const pos = sources.entry(v, i)?.value ?? sources.fallback;
    sources.setEntry(out, key, { key: pos, value: pos });
  });
  return out;
}

/** ["db"] to {db: {condition: service_started}}; a map is returned as is. */
function toDependsMap(v: unknown, sources: SourceMap): Obj {
  if (isObj(v)) return v;
  const out: Obj = {};
  if (!Array.isArray(v)) return out;
  sources.setContainer(out, sources.containerPos(v) ?? sources.fallback);
  v.forEach((item, i) => {
    if (typeof item !== 'string') return;
    const pos = sources.entry(v, i)?.value ?? sources.fallback;
    const dep: Obj = { condition: 'service_started' };
    sources.setContainer(dep, pos);
    sources.setEntry(dep, 'condition', { key: pos, value: pos });
    define(out, item, dep);
    sources.setEntry(out, item, { key: pos, value: pos });
  });
  return out;
}
