/**
 * A claim the dev container's user cannot write. Storage that ignores the pod's fsGroup (hostPath
 * volumes, the in-tree host-path provisioner, some NFS) gives a non-root dev container folders that
 * stay root's: its agent then stops at once with its own exit code (agent/home.go,
 * ExitStateUnwritable). `up` reads that code from the dev pod's status, records it on the claim and
 * rolls the dev pod with its state and synced folders in an emptyDir (mirror.ts, claimUnwritable),
 * which any uid can write under Pod Security `restricted` with no root container. What that gives
 * up (the files are not kept across dev pod restarts) and what to set is said in one line, at that
 * `up` and every later one, until `down --volumes` deletes the claim (docs/dev-containers.md,
 * "Storage that ignores fsGroup").
 *
 * The record is an annotation written with a field manager of its own, as agent-cache.ts's: the
 * claim's server-side applies neither own nor remove it.
 */
import * as k8s from '@kubernetes/client-node';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { CLAIM_UNWRITABLE_ANNOTATION } from './names.ts';

/** agent/home.go's ExitStateUnwritable: `supervise` could not write its state folder. */
export const AGENT_EXIT_STATE_UNWRITABLE = 73;

const FIELD_MANAGER = 'devtool-unwritable-claim';

/** Pure: a container of the pod stopped because its agent could not write its state folder (now, or at its last start). */
export function stateUnwritable(pod: V1Pod): boolean {
  return (pod.status?.containerStatuses ?? []).some((c) =>
    [c.state?.terminated, c.lastState?.terminated].some((t) => t?.exitCode === AGENT_EXIT_STATE_UNWRITABLE),
  );
}

/** The claim, when an earlier dev pod found it unwritable; undefined when it is not marked, or not there. */
export async function markedUnwritable(client: KubeClient, claimName: string): Promise<V1PersistentVolumeClaim | undefined> {
  try {
    const claim = await client.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace: client.namespace });
    return claim.metadata?.annotations?.[CLAIM_UNWRITABLE_ANNOTATION] ? claim : undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Records on the claim that the dev container cannot write it; returns the claim. */
export async function markUnwritable(client: KubeClient, claimName: string): Promise<V1PersistentVolumeClaim> {
  const body = { metadata: { annotations: { [CLAIM_UNWRITABLE_ANNOTATION]: 'state folder not writable by the dev container' } } };
  return await client.core.patchNamespacedPersistentVolumeClaim(
    { name: claimName, namespace: client.namespace, body, fieldManager: FIELD_MANAGER },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

/**
 * Pure: the one line `up` says while the dev container's files are in an emptyDir rather than on its
 * claim. `fromCompose`: the dev container comes from a Compose file, which has no field for its
 * claim's class: the cluster's default class is what decides.
 */
export function unwritableNotice(devName: string, claim: V1PersistentVolumeClaim, fromCompose = false): string {
  const name = claim.metadata?.name ?? '';
  const storageClass = claim.spec?.storageClassName;
  const set = fromCompose
    ? "make the cluster's default StorageClass one that applies fsGroup"
    : `set services.${devName}.persistentVolume.storageClass to a class that applies fsGroup`;
  return (
    `claim ${name}${storageClass ? ` (storage class ${storageClass})` : ''} is not writable by the dev container's user (its storage ignores ` +
    `fsGroup): the dev container keeps its files in an emptyDir instead, so they are lost when its pod restarts; for files that last, ${set} ` +
    `and run 'devtool down --volumes'`
  );
}
