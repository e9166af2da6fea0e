/**
 * A volume stranded on a drained node. A node-local volume (local-path, a hostPath or `local`
 * PersistentVolume) carries a required node affinity naming its node; once that node is cordoned
 * (`kubectl drain` or `cordon`: spec.unschedulable) or gone, no pod using the volume can be
 * scheduled anywhere, and the scheduler only says "volume node affinity conflict" until someone
 * uncordons the node. What `up` does about it is dev/drained-volume.ts's.
 */
import * as k8s from '@kubernetes/client-node';
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { KubeClient } from './client.ts';

const HOSTNAME = 'kubernetes.io/hostname';

/**
 * Pure: the nodes a volume is bound to by its required node affinity, when that affinity names
 * nodes by hostname and nothing else (a zone's disk names a zone, and may go to any of its nodes:
 * undefined). Every term must name hostnames: terms are ORed, so one open term frees the volume.
 */
export function volumeNodes(pv: V1PersistentVolume): string[] | undefined {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return undefined;
  const nodes: string[] = [];
  for (const term of terms) {
    const exprs = [...(term.matchExpressions ?? []), ...(term.matchFields ?? [])];
    const byName = exprs.filter((e) => e.operator === 'In' && (e.key === HOSTNAME || e.key === 'metadata.name'));
    if (byName.length === 0) return undefined;
    nodes.push(...byName.flatMap((e) => e.values ?? []));
  }
  return [...new Set(nodes)];
}

/**
 * Pure: the node a node-bound volume is stranded on, when every node it may be used on is cordoned
 * or no longer in the cluster; undefined while one of them can still take a pod.
 */
export function strandedOn(pv: V1PersistentVolume, nodes: readonly V1Node[]): string | undefined {
  const bound = volumeNodes(pv);
  if (!bound || bound.length === 0) return undefined;
  const usable = (name: string) => nodes.some((n) => n.metadata?.name === name && !n.spec?.unschedulable);
  return bound.some(usable) ? undefined : bound[0];
}

/** Annotations the binding and provisioning wrote on a claim: a claim made anew must not carry them. */
const BINDING_ANNOTATIONS = /^(pv\.kubernetes\.io\/|volume\.kubernetes\.io\/|volume\.beta\.kubernetes\.io\/|kubectl\.kubernetes\.io\/)/;

/**
 * Pure: a new claim like `old` (name, labels, class, size, access modes), unbound: no volume name,
 * no node the provisioner picked, and none of the annotations in `drop` (records of what the old
 * volume held).
 */
export function freshClaim(old: V1PersistentVolumeClaim, drop: readonly string[] = []): V1PersistentVolumeClaim {
  const annotations = Object.fromEntries(Object.entries(old.metadata?.annotations ?? {}).filter(([k]) => !BINDING_ANNOTATIONS.test(k) && !drop.includes(k)));
  const spec = old.spec ?? {};
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: old.metadata?.name,
      ...(old.metadata?.labels ? { labels: { ...old.metadata.labels } } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: {
      ...(spec.accessModes ? { accessModes: [...spec.accessModes] } : {}),
      ...(spec.resources ? { resources: structuredClone(spec.resources) } : {}),
      ...(spec.storageClassName !== undefined ? { storageClassName: spec.storageClassName } : {}),
      ...(spec.volumeMode ? { volumeMode: spec.volumeMode } : {}),
    },
  };
}

export interface StrandedClaim {
  claim: V1PersistentVolumeClaim;
  volume: string;
  node: string;
}

/** The claim, its volume and the drained node, when the claim's volume is stranded (undefined otherwise). */
export async function claimStranded(client: KubeClient, claimName: string): Promise<StrandedClaim | undefined> {
  const claim = await client.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace: client.namespace });
  const volume = claim.spec?.volumeName;
  if (!volume || claim.metadata?.deletionTimestamp) return undefined;
  const pv = await client.core.readPersistentVolume({ name: volume });
  if (!volumeNodes(pv)) return undefined;
  const node = strandedOn(pv, (await client.core.listNode()).items);
  return node ? { claim, volume, node } : undefined;
}

/** Keeps the volume (and its files) once its claim is deleted: reclaim policy Retain. */
export async function retainVolume(client: KubeClient, volume: string): Promise<void> {
  await client.core.patchPersistentVolume(
    { name: volume, body: { spec: { persistentVolumeReclaimPolicy: 'Retain' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}
