/**
 * PersistentVolumeClaims that keep a pod from being scheduled. A claim that is merely being
 * provisioned is a wait (seconds on the local cluster, tens of seconds for a cloud disk); a claim
 * that cannot bind says why in its events, or has no storage class to bind with at all: that is
 * reported at once, with what to do, instead of a timeout (a complaint users of peer tools make).
 */
import * as k8s from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, type KubeClient } from './client.ts';
import { unschedulableCondition } from './scheduling.ts';

/**
 * The scheduler's messages for a pod whose claims are not bound yet, or not in its cache yet (a
 * claim applied just before the pod, or the volume just provisioned for it: the scheduler retries
 * once it sees them). A claim that really cannot bind is told by claimProblem.
 */
export const UNBOUND_CLAIMS = /unbound immediate PersistentVolumeClaims|persistentvolumeclaim "[^"]+" not found|persistentvolume "[^"]+" not found/;

/** Whether the pod is unschedulable only until its claims are bound. */
export function waitsForClaims(pod: V1Pod): boolean {
  const c = unschedulableCondition(pod);
  return c !== undefined && UNBOUND_CLAIMS.test(c.message ?? '');
}

/** Why a claim is not bound, once that is a problem rather than a delay (undefined while fine). */
export async function claimProblem(client: KubeClient, name: string): Promise<string | undefined> {
  const pvc = await client.core.readNamespacedPersistentVolumeClaim({ name, namespace: client.namespace });
  if (pvc.status?.phase !== 'Pending') return undefined;
  const events = await client.core.listNamespacedEvent({
    namespace: client.namespace,
    fieldSelector: `involvedObject.kind=PersistentVolumeClaim,involvedObject.name=${name}`,
  });
  const warning = events.items
    .filter((e) => e.type === 'Warning')
    .sort((a, b) => new Date(a.lastTimestamp ?? 0).getTime() - new Date(b.lastTimestamp ?? 0).getTime())
    .at(-1);
  if (!pvc.spec?.storageClassName) {
    const classes = await client.kc.makeApiClient(k8s.StorageV1Api).listStorageClass();
    const isDefault = classes.items.some((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
    if (!isDefault)
      return `the cluster has no default StorageClass; name one for the volume (available: ${classes.items.map((c) => c.metadata?.name).join(', ') || 'none'})`;
  }
  return warning ? (warning.message ?? warning.reason ?? '').trim() : undefined;
}

/** For a pod waiting for its claims: the first claim that cannot bind, and why. */
export async function podClaimProblem(client: KubeClient, pod: V1Pod): Promise<string | undefined> {
  for (const v of pod.spec?.volumes ?? []) {
    const name = v.persistentVolumeClaim?.claimName;
    if (!name) continue;
    let problem: string | undefined;
    try {
      problem = await claimProblem(client, name);
    } catch (err) {
      // Really missing, not just unseen by the scheduler: nothing will create it.
      if (isNotFound(err)) return `persistent volume claim ${name} does not exist`;
      continue;
    }
    if (problem) return `persistent volume claim ${name} is Pending: ${problem}`;
  }
  return undefined;
}
