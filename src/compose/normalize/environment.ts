/**
 * A service's container environment and build arguments.
 *
 * environment: the env_file files in order, then `environment` on top, which wins even when its
 * value is empty (`FOO=` or `FOO: ""` set FOO to "") or absent (`FOO` or `FOO:` take FOO from
 * the environment devtool runs in: shell, then .env, then stored secrets; and when none has it,
 * FOO is left out of the container even if an env_file set it).
 *
 * build.args: values were interpolated from the local environment only (shell, then .env): stored
 * secrets never reach an image build. An arg without a value takes the local variable's value.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Path } from '../../yaml/errors.ts';
import { parseDotenv } from '../dotenv.ts';
import { get, isObj, keyValues, show, type NormalizeState, type Obj } from './state.ts';

/** What Kubernetes accepts as an environment variable name. */
const envName = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export function serviceEnvironment(ctx: NormalizeState, service: Obj, path: Path): Map<string, string> {
  const env = new Map<string, string>();
  for (const [key, value, at] of envFiles(ctx, get(service, 'env_file'), [...path, 'env_file'])) {
    if (!envName.test(key)) {
      ctx.fail(at, `the env file sets ${show(key)}, which is not a valid variable name (letters, digits, "_", "-" and ".", not starting with a digit)`);
      continue;
    }
    env.set(key, value);
  }
  for (const [key, value, at] of keyValues(ctx, get(service, 'environment'), [...path, 'environment'])) {
    if (!envName.test(key)) {
      ctx.fail(at, `${show(key)} is not a valid variable name (letters, digits, "_", "-" and ".", not starting with a digit)`, 'key');
      continue;
    }
    const resolved = value ?? ctx.lookup(key);
    if (resolved === undefined) env.delete(key);
    else env.set(key, resolved);
  }
  return sortedMap(env);
}

/** The variables of a service's env_file entries, in order, each with the path of its entry. */
function envFiles(ctx: NormalizeState, value: unknown, path: Path): [string, string, Path][] {
  if (value === undefined || value === null) return [];
  const entries = Array.isArray(value) ? value.map((v, i) => [v, [...path, i]] as const) : [[value, path] as const];
  const out: [string, string, Path][] = [];
  for (const [entry, at] of entries) {
    let file: string | undefined;
    let required = true;
    let format: 'default' | 'raw' = 'default';
    if (isObj(entry)) {
      file = ctx.str(get(entry, 'path'), [...at, 'path']);
      const req = get(entry, 'required');
      if (req !== undefined) required = ctx.bool(req, [...at, 'required']) ?? true;
      const fmt = get(entry, 'format');
      if (fmt === 'raw') format = 'raw';
      else if (fmt !== undefined) ctx.fail([...at, 'format'], `unknown env file format ${show(fmt)}: leave it out, or use raw`);
    } else {
      file = ctx.str(entry, at);
    }
    if (file === undefined) continue;
    const absolute = isAbsolute(file) ? file : resolve(ctx.projectDir, file);
    const shown = ctx.display(absolute);
    const text = ctx.files.readFile(absolute, 'env', shown);
    if (text === undefined) {
      if (required) ctx.fail(at, `env file ${show(file)} not found${shown === file ? '' : ` (looked at ${shown})`}`);
      continue;
    }
    const parsed = parseDotenv(text, shown, { lookup: ctx.lookup, format, onUnset: ctx.onUnset });
    ctx.problems.push(...parsed.problems);
    for (const [k, v] of parsed.values) out.push([k, v, at]);
  }
  return out;
}

export function buildArgs(ctx: NormalizeState, value: unknown, path: Path): Map<string, string> {
  const args = new Map<string, string>();
  for (const [key, v] of keyValues(ctx, value, path)) {
    const resolved = v ?? ctx.localLookup(key);
    if (resolved !== undefined) args.set(key, resolved);
  }
  return sortedMap(args);
}

export function sortedMap<V>(map: ReadonlyMap<string, V>): Map<string, V> {
  return new Map([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
