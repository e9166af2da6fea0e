/**
 * Putting a namespace's workloads to sleep and waking them, as pure patches: shared by preview
 * environments (server/previews/) and every namespace the service made (server/namespaces/).
 * Each workload keeps what to restore in an annotation of its own, so waking restores exactly what
 * ran, a workload added meanwhile is left alone, and sleeping twice changes nothing.
 */
import type * as k8s from '@kubernetes/client-node';
import { REPLICAS_BEFORE_SLEEP, SUSPEND_BEFORE_SLEEP } from '../../api/namespace-sleep.ts';

export { REPLICAS_BEFORE_SLEEP, SUSPEND_BEFORE_SLEEP };

export type ScaleAction = 'sleep' | 'wake';

type Workload = { metadata?: k8s.V1ObjectMeta; spec?: { replicas?: number } };
type CronJob = { metadata?: k8s.V1ObjectMeta; spec?: { suspend?: boolean } };

/** The merge patch that puts a Deployment or StatefulSet to sleep or wakes it, or undefined when it has nothing to change. */
export function scalePatch(w: Workload, action: ScaleAction): object | undefined {
  const kept = w.metadata?.annotations?.[REPLICAS_BEFORE_SLEEP];
  const replicas = w.spec?.replicas ?? 1;
  if (action === 'sleep') return replicas > 0 ? { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: String(replicas) } }, spec: { replicas: 0 } } : undefined;
  if (kept === undefined || !/^\d+$/.test(kept)) return undefined;
  return { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: null } }, spec: { replicas: Number(kept) } };
}

/**
 * The merge patch that suspends a CronJob for the sleep or gives it back its own `suspend`, or
 * undefined when it has nothing to change. A CronJob its owner had suspended stays suspended after
 * the wake; one the sleep suspended already is not marked again (its own value stays kept).
 */
export function cronJobPatch(c: CronJob, action: ScaleAction): object | undefined {
  const kept = c.metadata?.annotations?.[SUSPEND_BEFORE_SLEEP];
  if (action === 'sleep') {
    if (kept !== undefined) return c.spec?.suspend === true ? undefined : { spec: { suspend: true } };
    return { metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: String(c.spec?.suspend === true) } }, spec: { suspend: true } };
  }
  if (kept !== 'true' && kept !== 'false') return undefined;
  return { metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: null } }, spec: { suspend: kept === 'true' } };
}

/** A Deployment or StatefulSet whose wanted replicas are not all available yet; undefined when they are. */
export function notYetAvailable(w: {
  metadata?: k8s.V1ObjectMeta;
  spec?: { replicas?: number };
  status?: { availableReplicas?: number; observedGeneration?: number };
}): string | undefined {
  const wanted = w.spec?.replicas ?? 1;
  const available = w.status?.availableReplicas ?? 0;
  const seen = (w.status?.observedGeneration ?? 0) >= (w.metadata?.generation ?? 0);
  return seen && available >= wanted ? undefined : `${w.metadata?.name ?? '?'} ${available}/${wanted}`;
}
