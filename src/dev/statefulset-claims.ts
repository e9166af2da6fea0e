/**
 * `up` on a StatefulSet, once it is at zero: the dev pod takes over the first pod's claims
 * (statefulset.ts names them). Those that do not exist yet (the StatefulSet never ran its first pod)
 * are created as the controller would create them, so that `down`'s scale-up finds them and the
 * first pod starts with what was written in dev mode. Then it waits for the first pod to be gone:
 * two pods never use the data at once (with ReadWriteOnce on another node, they could not anyway).
 */
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';
import { DevtoolError } from '../base/errors.ts';
import { pollUntil } from '../kube/poll.ts';
import type { StatefulSetObject } from '../kube/objects.ts';
import { firstPodClaims, firstPodName } from './statefulset.ts';

export async function takeOverFirstPodClaims(client: KubeClient, sts: StatefulSetObject, o: { timeoutMs: number; step(message: string): void }): Promise<void> {
  const namespace = client.namespace;
  for (const c of firstPodClaims(sts)) {
    try {
      await client.core.readNamespacedPersistentVolumeClaim({ name: c.claim, namespace });
      continue;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    o.step(`creating persistent volume claim ${c.claim} (statefulset ${sts.metadata.name} has not created it yet; it keeps it afterwards)`);
    try {
      await client.core.createNamespacedPersistentVolumeClaim({ namespace, body: c.object });
    } catch (err) {
      // Created meanwhile (by the controller): that one is used.
      if ((err as { code?: number }).code !== 409)
        throw new DevtoolError(`cannot create persistent volume claim ${c.claim} in namespace ${namespace}: ${describeKubeError(err)}`);
    }
  }
  const pod = firstPodName(sts);
  if (!(await podExists(client, pod))) return;
  o.step(`waiting for pod ${pod} to end (the dev container takes over its volumes)`);
  await pollUntil(o.timeoutMs, `pod ${pod} of statefulset ${sts.metadata.name} to end`, async () => !(await podExists(client, pod)));
}

async function podExists(client: KubeClient, name: string): Promise<boolean> {
  try {
    await client.core.readNamespacedPod({ name, namespace: client.namespace });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
