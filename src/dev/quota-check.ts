/**
 * The namespace's ResourceQuotas and LimitRanges before the swap: `up` works out, as the API
 * server's admission will, whether the dev pod and its claim are admitted (every container names
 * what a quota demands, stays within the LimitRanges, and the quotas have room once the pods the
 * swap removes are gone), and refuses in one line naming the quota or LimitRange while the
 * original still runs. Without this the ReplicaSet's refusal is only an event after the original
 * is gone. The rules: kube/namespace-limits.ts; the words: docs/manifest.md, "Quotas and limit ranges".
 */
import { DevtoolError } from '../base/errors.ts';
import type { NamespaceLimitsApi } from '../kube/namespace-limits-api.ts';
import {
  addUsage,
  claimProblems,
  claimUsage,
  describeProblem,
  podProblems,
  podUsage,
  roomProblems,
  type LimitProblem,
  type NamespaceLimits,
} from '../kube/namespace-limits.ts';
import type { DevObjects } from './mirror.ts';
import { INSTALLER_NAME } from './mirror.ts';

export interface DevPodCheck {
  devName: string;
  namespace: string;
  objects: DevObjects;
  /** The dev container's name in the pod. */
  devContainer: string;
  /** Selects the pods the swap removes (the original's and an earlier dev pod's): their room is given back. */
  replacedPods: string;
  /** Where the dev container's resources are set: a manifest's services entry, or a Compose service. */
  source: 'manifest' | 'compose';
  /** The original's kind and name in words ("deployment web"), for its other containers; undefined for a standalone dev container. */
  original?: string;
}

/** Fails with one line when the namespace's quotas or LimitRanges would refuse the dev pod or its claim. */
export async function checkDevPodLimits(api: NamespaceLimitsApi, limits: NamespaceLimits, c: DevPodCheck): Promise<void> {
  if (limits.quotas.length === 0 && limits.limitRanges.length === 0) return;
  const spec = c.objects.deployment.spec?.template.spec;
  if (!spec) return;
  const claim = c.objects.claim;
  const newClaim = claim !== undefined && !(await api.claimExists(claim.metadata.name));
  const first =
    podProblems(spec, limits)[0] ??
    (newClaim ? claimProblems(claim, limits)[0] : undefined) ??
    roomProblems(addUsage(podUsage(spec, limits), newClaim ? claimUsage(claim) : {}), await api.podsUsage(c.replacedPods), limits)[0];
  if (first) throw new DevtoolError(devPodRefusal(first, c));
}

/** The one line: whose pod, the quota or LimitRange and what it says, what to change. */
export function devPodRefusal(p: LimitProblem, c: Pick<DevPodCheck, 'devName' | 'namespace' | 'devContainer' | 'source' | 'original'>): string {
  return `dev container ${c.devName} cannot start in namespace ${c.namespace}: ${describeProblem(p)}; ${fixFor(p, c)}; nothing was changed`;
}

function fixFor(p: LimitProblem, c: Pick<DevPodCheck, 'devName' | 'devContainer' | 'source' | 'original'>): string {
  if (p.kind === 'room') {
    if (/storage|persistentvolumeclaims/.test(p.resource))
      return `set services.${c.devName}.persistentVolume.size smaller (or persistentVolume.enabled: false), or free room in the namespace`;
    return /cpu|memory/.test(p.resource)
      ? `free room in the namespace, ask for a larger quota, or ${devResourcesFix(c, p.resource)}`
      : 'free room in the namespace (scale something down), or ask for a larger quota';
  }
  if (p.kind === 'bound' && p.type === 'PersistentVolumeClaim') return `set services.${c.devName}.persistentVolume.size within the LimitRange`;
  const container = 'container' in p ? p.container : undefined;
  if (container === INSTALLER_NAME) return "it is devtool's agent installer: ask for a LimitRange that admits it";
  if (container !== undefined && container !== c.devContainer)
    return `set it in the pod template of ${c.original ?? 'the original'} (container "${container}")`;
  return devResourcesFix(c, ...(p.kind === 'missing' ? p.resources : [p.resource]));
}

/** Where the user sets the dev container's requests and limits of these quota resources (cpu, limits.memory, ...). */
function devResourcesFix(c: Pick<DevPodCheck, 'devName' | 'source'>, ...resources: string[]): string {
  const names = [...new Set(resources.map((r) => r.replace(/^(requests|limits)\./, '')))];
  if (c.source === 'compose') {
    const fields = names.map((n) => (n === 'cpu' ? 'cpus' : n)).join(' and ');
    return `set deploy.resources of service ${c.devName} in the Compose file (reservations and limits of ${fields})`;
  }
  return `set services.${c.devName}.resources in the manifest (requests and limits of ${names.join(' and ')})`;
}
