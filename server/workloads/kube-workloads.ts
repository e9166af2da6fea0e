/**
 * A namespace's workloads on Kubernetes (client-node), with whatever credentials the KubeConfig
 * holds: the callers hand in a user's token (a preview's or a namespace's owner), never the
 * service's own, so Kubernetes RBAC decides what the sleep may change.
 */
import type * as k8s from '@kubernetes/client-node';
import { cronJobPatch, notYetAvailable, type ScaleAction, scalePatch } from './scaling.ts';

export interface NamespaceWorkloads {
  /**
   * sleep: every Deployment and StatefulSet with replicas goes to zero and every CronJob is
   * suspended, each keeping what it had; wake: those get it back. Answers how many changed.
   */
  scaleWorkloads(namespace: string, action: ScaleAction): Promise<number>;
  /** The Deployments and StatefulSets whose replicas are not all available (`name available/wanted`). */
  unavailableWorkloads(namespace: string): Promise<string[]>;
}

export async function kubeNamespaceWorkloads(kc: k8s.KubeConfig): Promise<NamespaceWorkloads> {
  const mod = await import('@kubernetes/client-node');
  const apps = kc.makeApiClient(mod.AppsV1Api);
  const batch = kc.makeApiClient(mod.BatchV1Api);
  const mergePatch = mod.setHeaderOptions('Content-Type', mod.PatchStrategy.MergePatch);
  return {
    async scaleWorkloads(namespace, action) {
      let changed = 0;
      for (const d of (await apps.listNamespacedDeployment({ namespace })).items) {
        const body = scalePatch(d, action);
        if (!body) continue;
        await apps.patchNamespacedDeployment({ name: d.metadata!.name!, namespace, body }, mergePatch);
        changed++;
      }
      for (const s of (await apps.listNamespacedStatefulSet({ namespace })).items) {
        const body = scalePatch(s, action);
        if (!body) continue;
        await apps.patchNamespacedStatefulSet({ name: s.metadata!.name!, namespace, body }, mergePatch);
        changed++;
      }
      for (const c of (await batch.listNamespacedCronJob({ namespace })).items) {
        const body = cronJobPatch(c, action);
        if (!body) continue;
        await batch.patchNamespacedCronJob({ name: c.metadata!.name!, namespace, body }, mergePatch);
        changed++;
      }
      return changed;
    },
    async unavailableWorkloads(namespace) {
      const [deployments, statefulSets] = await Promise.all([apps.listNamespacedDeployment({ namespace }), apps.listNamespacedStatefulSet({ namespace })]);
      return [...deployments.items, ...statefulSets.items].flatMap((w) => notYetAvailable(w) ?? []);
    },
  };
}
