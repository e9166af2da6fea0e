/**
 * What a namespace's ResourceQuotas and LimitRanges make of a pod or a claim, worked out before it
 * is written, as the API server's admission will: the LimitRange defaults a container gets, the
 * requests and limits a quota demands of every container, the LimitRange's minimum, maximum and
 * limit-to-request ratio, and whether a quota has room for what is added (after what is removed
 * at the same time). Pure: `up` and `deploy` read the objects (namespace-limits-api.ts) and say
 * the first problem in one line (docs/manifest.md, "Quotas and limit ranges").
 *
 * Quotas with scopes (BestEffort, Terminating, PriorityClass, ...) are left to the API server: which
 * pods they count depends on more than resources. Pod-level resources are not read.
 */
import type { V1Container, V1LimitRange, V1PersistentVolumeClaim, V1PodSpec, V1ResourceQuota, V1ResourceRequirements } from '@kubernetes/client-node';
import { exceeds, formatQuantity, parseQuantity } from './quantity.ts';

export interface QuotaView {
  name: string;
  /** status.hard, else spec.hard: resource name -> quantity. */
  hard: Record<string, number>;
  /** status.used: what the namespace uses now. */
  used: Record<string, number>;
}

export type LimitType = 'Container' | 'Pod' | 'PersistentVolumeClaim';

export interface LimitRangeItemView {
  limitRange: string;
  type: LimitType;
  min: Record<string, number>;
  max: Record<string, number>;
  default: Record<string, number>;
  defaultRequest: Record<string, number>;
  maxLimitRequestRatio: Record<string, number>;
}

export interface NamespaceLimits {
  /** Quotas without scopes only (see the top of this file). */
  quotas: readonly QuotaView[];
  limitRanges: readonly LimitRangeItemView[];
}

export const NO_LIMITS: NamespaceLimits = { quotas: [], limitRanges: [] };

/** Quota resource name -> amount used or asked ("pods": 1, "requests.cpu": 0.25, "requests.storage": bytes). */
export type Usage = Record<string, number>;

export type LimitProblem =
  /** A quota on cpu or memory, and a container that names no such request or limit (none defaulted either): each quota name it lacks. */
  | { kind: 'missing'; quota: string; resources: string[]; container: string }
  /** A LimitRange's min or max, and a value outside it or absent (`value` undefined). */
  | {
      kind: 'bound';
      limitRange: string;
      type: LimitType;
      container?: string;
      bound: 'min' | 'max';
      field: 'requests' | 'limits';
      resource: string;
      allowed: number;
      value?: number;
    }
  | { kind: 'ratio'; limitRange: string; container: string; resource: string; allowed: number; value?: number }
  /** A quota with too little room: `used` now, `freed` by what goes away at the same time. */
  | { kind: 'room'; quota: string; resource: string; requested: number; used: number; freed: number; hard: number };

/** The view of the objects as read from the API server. Quotas with scopes are left out. */
export function namespaceLimitsOf(quotas: readonly V1ResourceQuota[], limitRanges: readonly V1LimitRange[]): NamespaceLimits {
  return {
    quotas: quotas
      .filter((q) => !q.spec?.scopes?.length && !q.spec?.scopeSelector?.matchExpressions?.length)
      .map((q) => ({ name: q.metadata?.name ?? '', hard: amounts(q.status?.hard ?? q.spec?.hard), used: amounts(q.status?.used) })),
    limitRanges: limitRanges.flatMap((lr) =>
      (lr.spec?.limits ?? [])
        .filter((i): i is typeof i & { type: LimitType } => ['Container', 'Pod', 'PersistentVolumeClaim'].includes(i.type))
        .map((i) => ({
          limitRange: lr.metadata?.name ?? '',
          type: i.type,
          min: amounts(i.min),
          max: amounts(i.max),
          default: amounts(i._default),
          defaultRequest: amounts(i.defaultRequest),
          maxLimitRequestRatio: amounts(i.maxLimitRequestRatio),
        })),
    ),
  };
}

function amounts(list: Record<string, string> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(list ?? {})) {
    const n = parseQuantity(v);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

/** A container's requests and limits in numbers. */
interface Amounts {
  requests: Record<string, number>;
  limits: Record<string, number>;
}

/**
 * The container's requests and limits once admitted: a limit without a request makes the request
 * (the API's defaulting), then each LimitRange of type Container fills what is still missing.
 */
export function admittedResources(c: Pick<V1Container, 'resources'>, limits: NamespaceLimits): Amounts {
  const requests = amounts(c.resources?.requests);
  const lim = amounts(c.resources?.limits);
  for (const [k, v] of Object.entries(lim)) requests[k] ??= v;
  for (const item of containerItems(limits)) {
    for (const [k, v] of Object.entries(item.default)) lim[k] ??= v;
    for (const [k, v] of Object.entries(item.defaultRequest)) requests[k] ??= v;
  }
  return { requests, limits: lim };
}

function containerItems(limits: NamespaceLimits): LimitRangeItemView[] {
  return limits.limitRanges.filter((i) => i.type === 'Container');
}

/** The quota names whose presence makes a container name a request or a limit, and which. */
const DEMANDED: Record<string, { field: 'requests' | 'limits'; resource: string }> = {
  cpu: { field: 'requests', resource: 'cpu' },
  'requests.cpu': { field: 'requests', resource: 'cpu' },
  memory: { field: 'requests', resource: 'memory' },
  'requests.memory': { field: 'requests', resource: 'memory' },
  'limits.cpu': { field: 'limits', resource: 'cpu' },
  'limits.memory': { field: 'limits', resource: 'memory' },
};

/** Every container of the pod (init containers too) that lacks what a quota demands, then every LimitRange bound it breaks. */
export function podProblems(spec: Pick<V1PodSpec, 'containers' | 'initContainers'>, limits: NamespaceLimits): LimitProblem[] {
  const problems: LimitProblem[] = [];
  const containers = [...(spec.initContainers ?? []), ...spec.containers];
  for (const c of containers) {
    const admitted = admittedResources(c, limits);
    for (const quota of limits.quotas) {
      const lacking = Object.keys(quota.hard)
        .filter((name) => {
          const demand = DEMANDED[name];
          return demand !== undefined && admitted[demand.field][demand.resource] === undefined;
        })
        .sort();
      if (lacking.length > 0) problems.push({ kind: 'missing', quota: quota.name, resources: lacking, container: c.name });
    }
    for (const item of containerItems(limits)) problems.push(...boundProblems(item, admitted, c.name));
  }
  const podItems = limits.limitRanges.filter((i) => i.type === 'Pod');
  if (podItems.length > 0) {
    const total = podAmounts(spec, limits);
    for (const item of podItems) problems.push(...boundProblems(item, total));
  }
  return problems;
}

/** LimitRanger's checks of one container (or of the pod's totals, without `container`). */
function boundProblems(item: LimitRangeItemView, a: Amounts, container?: string): LimitProblem[] {
  const out: LimitProblem[] = [];
  const at = { limitRange: item.limitRange, type: item.type, ...(container !== undefined ? { container } : {}) };
  for (const [resource, min] of Object.entries(item.min)) {
    const request = a.requests[resource];
    const limit = a.limits[resource];
    if (request === undefined || exceeds(min, request))
      out.push({ kind: 'bound', ...at, bound: 'min', field: 'requests', resource, allowed: min, value: request });
    else if (limit !== undefined && exceeds(min, limit))
      out.push({ kind: 'bound', ...at, bound: 'min', field: 'limits', resource, allowed: min, value: limit });
  }
  for (const [resource, max] of Object.entries(item.max)) {
    const request = a.requests[resource];
    const limit = a.limits[resource];
    if (limit === undefined || exceeds(limit, max)) out.push({ kind: 'bound', ...at, bound: 'max', field: 'limits', resource, allowed: max, value: limit });
    else if (request !== undefined && exceeds(request, max))
      out.push({ kind: 'bound', ...at, bound: 'max', field: 'requests', resource, allowed: max, value: request });
  }
  if (container !== undefined) {
    for (const [resource, ratio] of Object.entries(item.maxLimitRequestRatio)) {
      const request = a.requests[resource];
      const limit = a.limits[resource];
      const value = request && limit ? limit / request : undefined;
      if (value === undefined || exceeds(value, ratio))
        out.push({ kind: 'ratio', limitRange: item.limitRange, container, resource, allowed: ratio, ...(value ? { value } : {}) });
    }
  }
  return out;
}

/**
 * The pod's requests and limits as the scheduler and quotas count them: the regular containers and
 * sidecars (init containers that keep running) together, or the largest init container that runs
 * before them, whichever is more.
 */
function podAmounts(spec: Pick<V1PodSpec, 'containers' | 'initContainers'>, limits: NamespaceLimits): Amounts {
  const total: Amounts = { requests: {}, limits: {} };
  const add = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
  };
  const inits = spec.initContainers ?? [];
  const sidecars = inits.filter((c) => c.restartPolicy === 'Always');
  for (const c of [...spec.containers, ...sidecars]) {
    const a = admittedResources(c, limits);
    add(total.requests, a.requests);
    add(total.limits, a.limits);
  }
  // Each init container runs beside the sidecars started before it.
  const running: Amounts = { requests: {}, limits: {} };
  for (const c of inits) {
    const a = admittedResources(c, limits);
    if (c.restartPolicy === 'Always') {
      add(running.requests, a.requests);
      add(running.limits, a.limits);
      continue;
    }
    for (const field of ['requests', 'limits'] as const) {
      for (const [k, v] of Object.entries(a[field])) total[field][k] = Math.max(total[field][k] ?? 0, v + (running[field][k] ?? 0));
    }
  }
  return total;
}

/** What one pod of this spec counts against quotas (pods, count/pods, requests.*, limits.*, cpu, memory). */
export function podUsage(spec: Pick<V1PodSpec, 'containers' | 'initContainers'>, limits: NamespaceLimits): Usage {
  const a = podAmounts(spec, limits);
  const usage: Usage = { pods: 1, 'count/pods': 1 };
  for (const resource of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = a.requests[resource];
    const limit = a.limits[resource];
    if (request !== undefined) {
      usage[`requests.${resource}`] = request;
      usage[resource] = request;
    }
    if (limit !== undefined) usage[`limits.${resource}`] = limit;
  }
  return usage;
}

/** What a new claim counts against quotas, its storage class's own quota names included when it names one. */
export function claimUsage(claim: Pick<V1PersistentVolumeClaim, 'spec'>): Usage {
  const storage = parseQuantity(claim.spec?.resources?.requests?.['storage']) ?? 0;
  const usage: Usage = { persistentvolumeclaims: 1, 'count/persistentvolumeclaims': 1, 'requests.storage': storage };
  const cls = claim.spec?.storageClassName;
  if (cls) {
    usage[`${cls}.storageclass.storage.k8s.io/persistentvolumeclaims`] = 1;
    usage[`${cls}.storageclass.storage.k8s.io/requests.storage`] = storage;
  }
  return usage;
}

/** The LimitRange bounds a claim's requested storage breaks. */
export function claimProblems(claim: Pick<V1PersistentVolumeClaim, 'spec'>, limits: NamespaceLimits): LimitProblem[] {
  const storage = parseQuantity(claim.spec?.resources?.requests?.['storage']);
  const requested: Amounts = { requests: storage === undefined ? {} : { storage }, limits: {} };
  // A claim's max bounds its request (a claim has no limit).
  return limits.limitRanges
    .filter((i) => i.type === 'PersistentVolumeClaim')
    .flatMap((i) => boundProblems({ ...i, max: {} }, requested).concat(claimMax(i, storage)));
}

function claimMax(item: LimitRangeItemView, storage: number | undefined): LimitProblem[] {
  const max = item.max['storage'];
  if (max === undefined || storage === undefined || !exceeds(storage, max)) return [];
  return [{ kind: 'bound', limitRange: item.limitRange, type: item.type, bound: 'max', field: 'requests', resource: 'storage', allowed: max, value: storage }];
}

export function addUsage(...parts: readonly Usage[]): Usage {
  const out: Usage = {};
  for (const u of parts) for (const [k, v] of Object.entries(u)) out[k] = (out[k] ?? 0) + v;
  return out;
}

export function scaleUsage(u: Usage, times: number): Usage {
  return Object.fromEntries(Object.entries(u).map(([k, v]) => [k, v * times]));
}

/** Each quota resource that `requested` would take past its hard limit, counting `freed` as given back. */
export function roomProblems(requested: Usage, freed: Usage, limits: NamespaceLimits): LimitProblem[] {
  const out: LimitProblem[] = [];
  for (const quota of limits.quotas) {
    for (const [resource, hard] of Object.entries(quota.hard)) {
      const asked = requested[resource];
      if (!asked) continue;
      const used = quota.used[resource] ?? 0;
      const given = Math.min(freed[resource] ?? 0, used);
      if (exceeds(used - given + asked, hard)) out.push({ kind: 'room', quota: quota.name, resource, requested: asked, used, freed: given, hard });
    }
  }
  return out;
}

/**
 * Requests and limits for a container of devtool's own (the agent's installer): `base` as it is
 * where nothing is demanded; what a quota demands and no LimitRange defaults taken from
 * `whenDemanded`; then each value moved into every LimitRange's [min, max], a maximum giving a
 * limit where there is none, and a request never above its limit.
 */
export function ownContainerResources(base: V1ResourceRequirements, whenDemanded: V1ResourceRequirements, limits: NamespaceLimits): V1ResourceRequirements {
  const values = { requests: { ...base.requests } as Record<string, string>, limits: { ...base.limits } as Record<string, string> };
  const admitted = admittedResources({ resources: values }, limits);
  for (const quota of limits.quotas) {
    for (const name of Object.keys(quota.hard)) {
      const d = DEMANDED[name];
      const value = d && whenDemanded[d.field]?.[d.resource];
      if (d && value !== undefined && admitted[d.field][d.resource] === undefined) values[d.field][d.resource] = value;
    }
  }
  for (const item of containerItems(limits)) {
    for (const [resource, max] of Object.entries(item.max)) values.limits[resource] ??= formatQuantity(resource, max);
    for (const field of ['requests', 'limits'] as const) {
      for (const [resource, text] of Object.entries(values[field])) {
        const v = parseQuantity(text);
        const min = item.min[resource];
        const max = item.max[resource];
        if (v === undefined) continue;
        if (min !== undefined && exceeds(min, v)) values[field][resource] = formatQuantity(resource, min);
        else if (max !== undefined && exceeds(v, max)) values[field][resource] = formatQuantity(resource, max);
      }
    }
  }
  for (const [resource, text] of Object.entries(values.requests)) {
    const limit = parseQuantity(values.limits[resource]);
    const request = parseQuantity(text);
    if (limit === undefined || request === undefined) continue;
    if (exceeds(request, limit)) values.requests[resource] = values.limits[resource]!;
    // A limit-to-request ratio: the request rises to meet it.
    const ratio = Math.min(...containerItems(limits).map((i) => i.maxLimitRequestRatio[resource] ?? Number.POSITIVE_INFINITY));
    if (exceeds(limit / request, ratio)) values.requests[resource] = formatQuantity(resource, Math.ceil((limit / ratio) * 1000) / 1000);
  }
  const { requests, limits: lim } = values;
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(lim).length ? { limits: lim } : {}) };
}

/** The problem in words, the subject first ("quota "compute" ..."), without what to do. */
export function describeProblem(p: LimitProblem): string {
  switch (p.kind) {
    case 'missing': {
      // "cpu" and "requests.cpu" ask for the same request: said once.
      const asked = [...new Set(p.resources.map((name) => `a ${DEMANDED[name]!.resource} ${DEMANDED[name]!.field === 'requests' ? 'request' : 'limit'}`))];
      return (
        `quota "${p.quota}" (${p.resources.join(', ')}) demands ${asked.join(' and ')} of every container, ` +
        `and container "${p.container}" names ${asked.length === 1 ? 'none' : asked.length === 2 ? 'neither' : 'none of them'} (no LimitRange gives a default)`
      );
    }
    case 'bound': {
      const what = `${p.resource} ${p.field === 'requests' ? 'request' : 'limit'}`;
      const per = p.type === 'Container' ? 'per container' : p.type === 'Pod' ? 'per pod' : 'per claim';
      const whose = p.container !== undefined ? `container "${p.container}"` : p.type === 'Pod' ? 'the pod' : 'the claim';
      const asks = p.value === undefined ? `names no ${what}` : `asks ${formatQuantity(p.resource, p.value)}`;
      const allowed = `${p.bound === 'min' ? 'no less than' : 'at most'} ${formatQuantity(p.resource, p.allowed)}`;
      return `LimitRange "${p.limitRange}" allows ${allowed} of ${what} ${per}, and ${whose} ${asks}`;
    }
    case 'ratio':
      return (
        `LimitRange "${p.limitRange}" allows a ${p.resource} limit of at most ${p.allowed} times the request, and container "${p.container}" ` +
        (p.value === undefined ? 'names no request or no limit' : `asks ${Math.round(p.value * 100) / 100} times`)
      );
    case 'room': {
      const freed = p.freed > 0 ? ` (${formatQuantity(p.resource, p.freed)} of it freed as the old pods go)` : '';
      return (
        `quota "${p.quota}" has no room for ${p.resource}: it needs ${formatQuantity(p.resource, p.requested)} more, and ` +
        `${formatQuantity(p.resource, p.used - p.freed)} of ${formatQuantity(p.resource, p.hard)} is used${freed}`
      );
    }
  }
}
