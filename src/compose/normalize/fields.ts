/**
 * Service fields with a notation of their own: healthcheck, restart, resources, command words.
 */
import { isQualifiedName } from '../../kube/naming.ts';
import { formatPath, formatPos, type Path } from '../../yaml/errors.ts';
import { didYouMean } from '../../base/suggest.ts';
import type { Healthcheck, ResourceAmounts, Resources, RestartPolicy } from '../model.ts';
import { ShellwordsError, splitShellwords } from '../shellwords.ts';
import { get, isObj, keyValues, show, type NormalizeState, type Obj } from './state.ts';
import { sortedMap } from './environment.ts';

/** `command`, `entrypoint`: a list as is, a string split into words like a shell would. */
export function words(ctx: NormalizeState, value: unknown, path: Path): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return ctx.strings(value, path);
  const text = ctx.str(value, path);
  if (text === undefined) return undefined;
  try {
    return splitShellwords(text);
  } catch (err) {
    if (!(err instanceof ShellwordsError)) throw err;
    ctx.fail(path, `${err.message} in ${show(text)}`);
    return undefined;
  }
}

export function healthcheck(ctx: NormalizeState, value: unknown, path: Path, serviceName: string): Healthcheck | undefined {
  if (!isObj(value)) return undefined;
  const disable = get(value, 'disable');
  if (disable !== undefined && ctx.bool(disable, [...path, 'disable']) === true) return undefined;
  const test = get(value, 'test');
  const http = get(value, 'http');
  let probe: Healthcheck['test'] | undefined;
  let none = false;
  if (test !== undefined && test !== null) {
    const t = testCommand(ctx, test, [...path, 'test']);
    if (t === 'none') none = true;
    else if (t) probe = { kind: 'exec', command: t };
  }
  if (http !== undefined && http !== null) {
    if (probe || none) {
      ctx.fail([...path, 'http'], 'set either test or http, not both');
      return undefined;
    }
    const hpath = ctx.str(get(http, 'path'), [...path, 'http', 'path']);
    const port = ctx.port(get(http, 'port'), [...path, 'http', 'port']);
    if (hpath !== undefined && !hpath.startsWith('/')) ctx.fail([...path, 'http', 'path'], `must start with "/", not ${show(hpath)}`);
    if (hpath === undefined || port === undefined || !hpath.startsWith('/')) return undefined;
    probe = { kind: 'http', path: hpath, port };
  }
  if (none) return undefined;
  if (!probe) {
    ctx.warn(`services.${serviceName}.healthcheck has no test: the image's own HEALTHCHECK does not apply on Kubernetes, so no probe is set`);
    return undefined;
  }
  const seconds = (key: string): number | undefined => {
    const v = get(value, key);
    return v === undefined || v === null ? undefined : ctx.durationSeconds(v, [...path, key]);
  };
  const interval = seconds('interval');
  const timeout = seconds('timeout');
  const startPeriod = seconds('start_period');
  if (get(value, 'start_interval') !== undefined) seconds('start_interval'); // checked, not used: Kubernetes has no such setting
  const retriesRaw = get(value, 'retries');
  const retries = retriesRaw === undefined || retriesRaw === null ? undefined : ctx.int(retriesRaw, [...path, 'retries'], 'a whole number', 0, 1_000_000);
  return {
    pos: ctx.at(path),
    test: probe,
    ...(interval !== undefined ? { intervalSeconds: interval } : {}),
    ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
    ...(startPeriod !== undefined ? { startPeriodSeconds: startPeriod } : {}),
    ...(retries !== undefined ? { retries } : {}),
  };
}

/** The command of a healthcheck test: a string is CMD-SHELL; a list starts with NONE, CMD or CMD-SHELL. */
function testCommand(ctx: NormalizeState, test: unknown, path: Path): string[] | 'none' | undefined {
  if (typeof test === 'string') return test.trim() === '' ? undefined : ['/bin/sh', '-c', test];
  if (!Array.isArray(test) || test.length === 0) {
    ctx.fail(path, 'must be a command: a string, or a list starting with NONE, CMD or CMD-SHELL');
    return undefined;
  }
  const items = ctx.strings(test, path);
  const [kind, ...rest] = items;
  if (kind === 'NONE') return 'none';
  if (kind === 'CMD' && rest.length > 0) return rest;
  if (kind === 'CMD-SHELL' && rest.length > 0) return ['/bin/sh', '-c', rest.join(' ')];
  if (kind === 'CMD' || kind === 'CMD-SHELL') {
    ctx.fail(path, `${kind} needs a command after it`);
    return undefined;
  }
  ctx.fail([...path, 0], `must be NONE, CMD or CMD-SHELL, not ${show(kind)}${didYouMean(kind ?? '', ['NONE', 'CMD', 'CMD-SHELL'])}`);
  return undefined;
}

const restartValues: readonly RestartPolicy[] = ['always', 'unless-stopped', 'any', 'no', 'never', 'none', 'on-failure'];

/** The restart policy (`restart`, else deploy.restart_policy.condition, else any) and its retry limit. */
export function restartPolicy(ctx: NormalizeState, service: Obj, path: Path): { restart: RestartPolicy; maxAttempts?: number } {
  const policy = get(get(service, 'deploy'), 'restart_policy');
  let maxAttempts: number | undefined;
  const rawMax = get(policy, 'max_attempts');
  if (rawMax !== undefined && rawMax !== null) maxAttempts = ctx.int(rawMax, [...path, 'deploy', 'restart_policy', 'max_attempts'], 'a whole number', 0, 1000);
  const parse = (value: unknown, at: Path): RestartPolicy | undefined => {
    const text = String(value).trim();
    const onFailure = /^on-failure:(\d+)$/.exec(text);
    if (onFailure) {
      maxAttempts ??= ctx.int(onFailure[1], at, 'a whole number', 0, 1000);
      return 'on-failure';
    }
    if ((restartValues as readonly string[]).includes(text)) return text as RestartPolicy;
    ctx.fail(at, `unknown restart policy ${show(value)}: use ${restartValues.join(', ')}${didYouMean(text, restartValues)}`);
    return undefined;
  };
  const restart = get(service, 'restart');
  const condition = get(policy, 'condition');
  const chosen =
    restart !== undefined && restart !== null
      ? parse(restart, [...path, 'restart'])
      : condition !== undefined && condition !== null
        ? parse(condition, [...path, 'deploy', 'restart_policy', 'condition'])
        : 'any';
  return { restart: chosen ?? 'any', ...(maxAttempts !== undefined ? { maxAttempts } : {}) };
}

export function resources(ctx: NormalizeState, service: Obj, path: Path): Resources {
  const res = get(get(service, 'deploy'), 'resources');
  const base = [...path, 'deploy', 'resources'];
  const requests = amounts(ctx, get(res, 'reservations'), [...base, 'reservations']);
  const limits = amounts(ctx, get(res, 'limits'), [...base, 'limits']);
  // The older service-level fields (Compose file format 2), used when deploy.resources does not say.
  const legacy = (key: string, parse: typeof cpuQuantity): string | undefined => {
    const v = get(service, key);
    return v === undefined || v === null ? undefined : parse(ctx, v, [...path, key]);
  };
  const cpus = legacy('cpus', cpuQuantity);
  const memLimit = legacy('mem_limit', memoryQuantity);
  const memReservation = legacy('mem_reservation', memoryQuantity);
  return {
    requests: { ...(memReservation ? { memory: memReservation } : {}), ...requests },
    limits: { ...(cpus ? { cpu: cpus } : {}), ...(memLimit ? { memory: memLimit } : {}), ...limits },
  };
}

function amounts(ctx: NormalizeState, value: unknown, path: Path): ResourceAmounts {
  if (!isObj(value)) return {};
  const cpus = get(value, 'cpus');
  const cpuAlias = get(value, 'cpu');
  if (cpus !== undefined && cpuAlias !== undefined && String(cpus) !== String(cpuAlias)) {
    ctx.fail([...path, 'cpu'], 'set cpus or cpu, not both');
  }
  const cpuRaw = cpus ?? cpuAlias;
  const cpu = cpuRaw === undefined ? undefined : cpuQuantity(ctx, cpuRaw, [...path, cpus !== undefined ? 'cpus' : 'cpu']);
  const memRaw = get(value, 'memory');
  const memory = memRaw === undefined ? undefined : memoryQuantity(ctx, memRaw, [...path, 'memory']);
  return { ...(cpu !== undefined ? { cpu } : {}), ...(memory !== undefined ? { memory } : {}) };
}

/** CPUs: a number of cores (0.5, "1.5") or millicores ("500m"), as a Kubernetes quantity. */
export function cpuQuantity(ctx: NormalizeState, value: unknown, path: Path): string | undefined {
  const text = String(value).trim();
  let milli: number | undefined;
  if (/^\d+m$/.test(text)) milli = Number(text.slice(0, -1));
  else if (/^(\d+(\.\d*)?|\.\d+)$/.test(text)) milli = Math.round(Number(text) * 1000);
  if (milli === undefined || !Number.isFinite(milli) || milli <= 0) {
    ctx.fail(path, `invalid CPU amount ${show(value)}: use a number of cores (0.5) or millicores (500m)`);
    return undefined;
  }
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

const memoryUnits: Record<string, number> = { '': 1, b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50 };
const binarySuffixes: [string, number][] = [
  ['Pi', 2 ** 50],
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
];

/**
 * Memory: Compose's byte units (b, k, m, g, t with an optional b, any case; binary, as Docker
 * reads them: "512m" is 512 MiB, not Kubernetes' 0.512 bytes) or Kubernetes binary suffixes
 * (Ki, Mi, Gi, Ti), as a Kubernetes quantity in the largest binary unit that divides it.
 */
export function memoryQuantity(ctx: NormalizeState, value: unknown, path: Path): string | undefined {
  const text = String(value).trim();
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(text);
  let bytes: number | undefined;
  if (m) {
    const unit = m[2]!;
    const kube = /^([KMGTP])i$/.exec(unit);
    const docker = /^([bkmgtp]?)b?$/i.exec(unit);
    const factor = kube ? memoryUnits[kube[1]!.toLowerCase()] : docker ? memoryUnits[docker[1]!.toLowerCase()] : undefined;
    if (factor !== undefined) bytes = Math.round(Number(m[1]) * factor);
  }
  if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes <= 0) {
    ctx.fail(path, `invalid memory amount ${show(value)}: use a number with a unit, e.g. 512m, 1g or 256Mi`);
    return undefined;
  }
  for (const [suffix, size] of binarySuffixes) if (bytes % size === 0) return `${bytes / size}${suffix}`;
  return String(bytes);
}

/**
 * Compose labels become annotations (docs/compose.md). A key that cannot be an annotation name (Traefik's
 * router labels often run past 63 characters) is skipped with one warning naming every such key
 * and where it is: other tools' labels must not stop a deploy.
 */
export function annotations(ctx: NormalizeState, value: unknown, path: Path): Map<string, string> {
  const out = new Map<string, string>();
  const skipped: string[] = [];
  for (const [k, v, at] of keyValues(ctx, value, path)) {
    if (isQualifiedName(k)) out.set(k, v ?? '');
    else skipped.push(`${JSON.stringify(k)} (${formatPos(ctx.at(at, 'key'))})`);
  }
  if (skipped.length > 0) {
    ctx.warn(
      `${formatPath(path)}: skipped ${skipped.join(', ')}: not Kubernetes annotation names (an optional DNS prefix and "/", then at most 63 ` +
        'letters, digits, "-", "_" and ".")',
    );
  }
  return sortedMap(out);
}
