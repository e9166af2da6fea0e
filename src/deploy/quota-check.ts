/**
 * The namespace's ResourceQuotas and LimitRanges before a Compose deploy applies anything: every
 * container names what a quota demands (after LimitRange defaults), stays within the LimitRanges,
 * and the quotas have room for all the deploy's pods and new claims at once (the environment's
 * current pods, which the deploy replaces or keeps, counted as given back). The first problem is
 * one line naming the service, its object and the quota or LimitRange; nothing is applied. The
 * API server's dry run of every object comes after and still refuses what this cannot see (quotas
 * with scopes). The rules: kube/namespace-limits.ts; docs/compose.md, "Quotas and limit ranges".
 */
import { DevtoolError } from '../base/errors.ts';
import type { RolloutStep, Translation } from '../compose/translate.ts';
import type { NamespaceLimitsApi } from '../kube/namespace-limits-api.ts';
import {
  addUsage,
  claimProblems,
  claimUsage,
  describeProblem,
  podProblems,
  podUsage,
  roomProblems,
  scaleUsage,
  type LimitProblem,
  type NamespaceLimits,
  type Usage,
} from '../kube/namespace-limits.ts';
import type { KubeObject, PersistentVolumeClaimObject, WorkloadObject } from '../kube/objects.ts';

/** Where a problem is: the Compose service and its object ("Deployment web"), a named volume's claim, or (room) the whole deploy. */
export interface DeployProblem {
  problem: LimitProblem;
  service?: string;
  object?: string;
}

/**
 * Pure: the first container or claim problem of the translation, else the first quota without
 * room for the pods and new claims together. `existingClaims`: claims the namespace has already
 * (they ask for no new room); `freed`: what the environment's current pods use.
 */
export function deployLimitProblem(
  t: Pick<Translation, 'objects' | 'rollout'>,
  limits: NamespaceLimits,
  existingClaims: ReadonlySet<string>,
  freed: Usage,
): DeployProblem | undefined {
  const serviceOf = new Map(t.rollout.map((s: RolloutStep) => [s.name, s.service]));
  const at = (o: KubeObject) => ({
    object: `${o.kind} ${o.metadata.name}`,
    ...(serviceOf.has(o.metadata.name) ? { service: serviceOf.get(o.metadata.name)! } : {}),
  });
  const asked: Usage[] = [];
  for (const o of t.objects) {
    if (o.kind === 'PersistentVolumeClaim') {
      if (existingClaims.has(o.metadata.name)) continue;
      const problem = claimProblems(o, limits)[0];
      if (problem) return { problem, ...at(o) };
      asked.push(claimUsage(o));
      continue;
    }
    if (o.kind !== 'Deployment' && o.kind !== 'StatefulSet' && o.kind !== 'Job') continue;
    const spec = o.spec?.template.spec;
    if (!spec) continue;
    const problem = podProblems(spec, limits)[0];
    if (problem) return { problem, ...at(o) };
    asked.push(scaleUsage(podUsage(spec, limits), podCount(o)));
    for (const claim of newStatefulSetClaims(o, existingClaims)) {
      const claimProblem = claimProblems(claim, limits)[0];
      if (claimProblem) return { problem: claimProblem, ...at(o) };
      asked.push(claimUsage(claim));
    }
  }
  const room = roomProblems(addUsage(...asked), freed, limits)[0];
  return room ? { problem: room } : undefined;
}

/** Pods the workload runs at once. */
function podCount(o: WorkloadObject): number {
  if (o.kind === 'Job') return o.spec?.parallelism ?? 1;
  return o.spec?.replicas ?? 1;
}

/** The claims a StatefulSet's pods get from its templates that do not exist yet (`<template>-<set>-<ordinal>`). */
function newStatefulSetClaims(o: WorkloadObject, existing: ReadonlySet<string>): Pick<PersistentVolumeClaimObject, 'spec' | 'metadata'>[] {
  if (o.kind !== 'StatefulSet') return [];
  const out: Pick<PersistentVolumeClaimObject, 'spec' | 'metadata'>[] = [];
  for (const template of o.spec?.volumeClaimTemplates ?? []) {
    for (let i = 0; i < (o.spec?.replicas ?? 1); i++) {
      const name = `${template.metadata?.name}-${o.metadata.name}-${i}`;
      if (!existing.has(name)) out.push({ metadata: { name }, spec: template.spec });
    }
  }
  return out;
}

/** Every claim name the translation may create, the StatefulSets' included. */
export function claimNames(t: Pick<Translation, 'objects'>): string[] {
  return t.objects.flatMap((o) => {
    if (o.kind === 'PersistentVolumeClaim') return [o.metadata.name];
    if (o.kind !== 'StatefulSet') return [];
    const replicas = o.spec?.replicas ?? 1;
    return (o.spec?.volumeClaimTemplates ?? []).flatMap((tpl) => Array.from({ length: replicas }, (_, i) => `${tpl.metadata?.name}-${o.metadata.name}-${i}`));
  });
}

/** Reads the namespace's limits and fails with one line on the first problem (see the top of this file). */
export async function checkDeployLimits(
  api: NamespaceLimitsApi,
  t: Translation,
  p: { environment: string; namespace: string; podSelector: string },
): Promise<void> {
  const limits = await api.limits();
  if (limits.quotas.length === 0 && limits.limitRanges.length === 0) return;
  const names = claimNames(t);
  const exists = await Promise.all(names.map((n) => api.claimExists(n)));
  const existing = new Set(names.filter((_, i) => exists[i]));
  const found = deployLimitProblem(t, limits, existing, await api.podsUsage(p.podSelector));
  if (found) throw new DevtoolError(deployRefusal(found, p.environment, p.namespace));
}

export function deployRefusal(d: DeployProblem, environment: string, namespace: string): string {
  const what = d.service ? `service ${d.service} (${d.object})` : (d.object ?? `environment "${environment}"`);
  return `cannot deploy ${what} in namespace ${namespace}: ${describeProblem(d.problem)}; ${fixFor(d)}; nothing was applied`;
}

function fixFor(d: DeployProblem): string {
  const p = d.problem;
  if (p.kind === 'room') return 'free room in the namespace (destroy or scale down what it runs), lower replicas or resources, or ask for a larger quota';
  if (p.kind === 'bound' && p.type === 'PersistentVolumeClaim') return "set the volume's driver_opts.size within the LimitRange in the Compose file";
  const names = p.kind === 'missing' ? p.resources : [`${p.kind === 'ratio' || p.field === 'limits' ? 'limits' : 'requests'}.${p.resource}`];
  const fields = [...new Set(names.map(composeField))];
  return `set ${fields.join(' and ')} of service ${d.service ?? d.object ?? '?'} in the Compose file`;
}

/** The Compose field of a quota's resource name: limits.cpu -> deploy.resources.limits.cpus, memory -> deploy.resources.reservations.memory. */
function composeField(name: string): string {
  const limit = name.startsWith('limits.');
  const resource = name.replace(/^(requests|limits)\./, '');
  return `deploy.resources.${limit ? 'limits' : 'reservations'}.${resource === 'cpu' ? 'cpus' : resource}`;
}
