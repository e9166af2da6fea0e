/**
 * Which pods and containers `logs` reads, as pure functions of the pods the API server lists: the
 * service of a pod (as `deploy` labels it: kube/labels.ts), the services asked for, and which of a
 * pod's containers have a log yet.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { DevtoolError } from '../../base/errors.ts';
import { SERVICE_LABEL } from '../../kube/labels.ts';
import { toDnsLabel } from '../../kube/naming.ts';

/**
 * The service of a pod: devtool's service label (a Compose service, and its dev container); else
 * the workload that owns it (what a manifest's commands made: `deploy` labels only its
 * environment); else the pod itself.
 */
export function podService(pod: V1Pod): string {
  const label = pod.metadata?.labels?.[SERVICE_LABEL];
  if (label) return label;
  return ownerWorkload(pod) ?? pod.metadata?.name ?? '';
}

/** The name of the workload owning a pod: a Deployment's name for a pod of its ReplicaSet (the pod-template-hash dropped). */
export function ownerWorkload(pod: V1Pod): string | undefined {
  const owner = pod.metadata?.ownerReferences?.find((r) => r.controller);
  if (!owner) return undefined;
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash && owner.name.endsWith(`-${hash}`)) return owner.name.slice(0, -hash.length - 1);
  return owner.name;
}

/**
 * The services the command line names, as the pods carry them: a Compose service may be named as
 * in its file (`my_db`) or as in Kubernetes (`my-db`). An unknown one fails, naming those that exist.
 */
export function chosenServices(asked: readonly string[], existing: Iterable<string>, where: string): Set<string> {
  const known = new Set(existing);
  const chosen = new Set<string>();
  for (const name of asked) {
    const found = known.has(name) ? name : known.has(toDnsLabel(name)) ? toDnsLabel(name) : undefined;
    if (found === undefined) {
      const list = [...known].sort();
      throw new DevtoolError(
        list.length
          ? `no service "${name}" in ${where}; its services: ${list.join(', ')}`
          : `no service "${name}" in ${where}: it has no services (deploy it with 'devtool deploy')`,
      );
    }
    chosen.add(found);
  }
  return chosen;
}

/** One run of one container: a restarted container is a new one, with a log of its own. */
export interface ContainerRun {
  /** The pod's service (podService). */
  service: string;
  pod: string;
  container: string;
  /** The runtime's id of this run of the container (status.containerID). */
  runId: string;
  /** The pod has several containers: lines name theirs. */
  several: boolean;
}

/** The containers of a pod that have a log: started (running, or ended), one entry per container. */
export function startedContainers(pod: V1Pod): ContainerRun[] {
  if (pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Running') return [];
  const service = podService(pod);
  const name = pod.metadata?.name ?? '';
  const several = (pod.spec?.containers.length ?? 0) > 1;
  return (pod.status?.containerStatuses ?? [])
    .filter((s) => s.containerID && (s.state?.running || s.state?.terminated))
    .map((s) => ({ service, pod: name, container: s.name, runId: s.containerID!, several }));
}

/** The containers of a pod that have no log yet, and why (ContainerCreating, ImagePullBackOff). */
export function waitingContainers(pod: V1Pod): { container: string; reason: string }[] {
  const started = new Set(startedContainers(pod).map((c) => c.container));
  return (pod.spec?.containers ?? [])
    .filter((c) => !started.has(c.name))
    .map((c) => {
      const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
      return { container: c.name, reason: status?.state?.waiting?.reason ?? pod.status?.phase ?? 'Pending' };
    });
}

/** Pods in the order their logs start: by service, then by name, so the colours of services do not depend on timing. */
export function byServiceThenName(a: V1Pod, b: V1Pod): number {
  return podService(a).localeCompare(podService(b)) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

/** A workload of the environment, as kube/workloads.ts lists them. */
export interface Workload {
  name: string;
  labels: Record<string, string>;
}

/** The service a workload runs: devtool's service label, else its own name (as its pods' podService). */
export function workloadService(w: Workload): string {
  return w.labels[SERVICE_LABEL] || w.name;
}
