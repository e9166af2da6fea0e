/**
 * The Kubernetes objects devtool generates, typed with the client's models (types only: nothing of
 * the client is loaded at run time by importing this). Every object has its apiVersion, kind and
 * name set, which server-side apply needs.
 */
import type { V1Deployment, V1Ingress, V1Job, V1ObjectMeta, V1PersistentVolumeClaim, V1Service, V1StatefulSet } from '@kubernetes/client-node';

type Named<T> = T & { apiVersion: string; kind: string; metadata: V1ObjectMeta & { name: string } };

export type DeploymentObject = Named<V1Deployment> & { kind: 'Deployment' };
export type StatefulSetObject = Named<V1StatefulSet> & { kind: 'StatefulSet' };
export type JobObject = Named<V1Job> & { kind: 'Job' };
export type ServiceObject = Named<V1Service> & { kind: 'Service' };
export type IngressObject = Named<V1Ingress> & { kind: 'Ingress' };
export type PersistentVolumeClaimObject = Named<V1PersistentVolumeClaim> & { kind: 'PersistentVolumeClaim' };

export type WorkloadObject = DeploymentObject | StatefulSetObject | JobObject;
export type KubeObject = WorkloadObject | ServiceObject | IngressObject | PersistentVolumeClaimObject;
export type KubeKind = KubeObject['kind'];

/** The order objects are applied in: storage and addresses before what uses them, routes last. */
export const applyOrder: readonly KubeKind[] = ['PersistentVolumeClaim', 'Service', 'Deployment', 'StatefulSet', 'Job', 'Ingress'];

/** Objects in apply order, then by name: the same input always gives the same sequence. */
export function sortObjects<T extends KubeObject>(objects: readonly T[]): T[] {
  return [...objects].sort((a, b) => applyOrder.indexOf(a.kind) - applyOrder.indexOf(b.kind) || compare(a.metadata.name, b.metadata.name));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
