/**
 * Writes and removes objects. Applies are server-side applies with devtool as the field manager
 * (forced, since devtool owns what it deploys), so re-deploying is idempotent and fields set by
 * others (for example an HPA's replicas) are not fought over unless devtool sets them too.
 */
import * as k8s from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import { FIELD_MANAGER, isNotFound, type KubeClient } from './client.ts';
import { describeKubeError } from './config.ts';
import { namespacedDeletableKinds, type ResourceKind } from './discovery.ts';

export function objectRef(o: KubernetesObject): string {
  return `${o.kind}/${o.metadata?.name}`;
}

/** Server-side applies one object in the client's namespace; `dryRun` asks the server to check only. */
export async function applyObject<T extends KubernetesObject>(client: KubeClient, object: T, opts: { dryRun?: boolean } = {}): Promise<T> {
  const body = { ...object, metadata: { ...object.metadata, namespace: object.metadata?.namespace ?? client.namespace } } as T;
  try {
    return await client.objects.patch(body, undefined, opts.dryRun ? 'All' : undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
  } catch (err) {
    throw new DevtoolError(`cannot apply ${objectRef(object)} in namespace ${client.namespace}: ${describeKubeError(err)}`);
  }
}

export interface LabeledObject {
  kind: ResourceKind;
  name: string;
  /**
   * It has a controlling owner (a Deployment's ReplicaSet, a StatefulSet's ControllerRevision, their
   * Pods): the garbage collector removes it with its owner.
   */
  owned?: boolean;
}

/** Objects in the client's namespace that match the label selector: of the given kinds, else of every kind. */
export async function listByLabel(client: KubeClient, labelSelector: string, only?: readonly ResourceKind[]): Promise<LabeledObject[]> {
  const kinds = only ?? (await namespacedDeletableKinds(client));
  const found = await Promise.all(
    kinds.map(async (kind) => {
      const path =
        `${kind.apiVersion === 'v1' ? '/api/v1' : `/apis/${kind.apiVersion}`}/namespaces/${encodeURIComponent(client.namespace)}/${kind.resource}` +
        `?labelSelector=${encodeURIComponent(labelSelector)}`;
      try {
        const list = await client.getJson<{ items: { metadata: { name: string; ownerReferences?: { controller?: boolean }[] } }[] }>(path);
        return list.items.map((i) => ({ kind, name: i.metadata.name, ...(i.metadata.ownerReferences?.some((r) => r.controller) ? { owned: true } : {}) }));
      } catch {
        return []; // a kind we may not list (RBAC) or an API that is down: skip, reported by callers that care
      }
    }),
  );
  return found.flat();
}

/** Deletes one object; a missing one is fine (someone else removed it first). */
export async function deleteObject(client: KubeClient, o: LabeledObject): Promise<void> {
  try {
    await client.objects.delete(
      { apiVersion: o.kind.apiVersion, kind: o.kind.kind, metadata: { name: o.name, namespace: client.namespace } },
      undefined,
      undefined,
      undefined,
      undefined,
      'Background',
    );
  } catch (err) {
    if (isNotFound(err)) return;
    throw new DevtoolError(`cannot delete ${o.kind.kind}/${o.name} in namespace ${client.namespace}: ${describeKubeError(err)}`);
  }
}
