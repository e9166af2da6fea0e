/** PreviewCluster on Kubernetes, less the service's records: the run's Jobs, Ingress hosts and workload scaling, with a user's token. */
import type * as k8s from '@kubernetes/client-node';
import type { RunTokens } from '../pipelines/cluster.ts';
import type { RunRecords } from '../store/store.ts';
import { kubeRunJobs } from '../pipelines/kube-cluster.ts';
import type { PreviewCluster } from './previews.ts';

/** On a sleeping preview's Deployments and StatefulSets: the replicas they had. */
export const REPLICAS_BEFORE_SLEEP = 'devtool.dev/replicas-before-sleep';

type Workload = { metadata?: k8s.V1ObjectMeta; spec?: { replicas?: number } };

/** The merge patch that puts a workload to sleep or wakes it, or undefined when it has nothing to change. */
export function scalePatch(w: Workload, action: 'sleep' | 'wake'): object | undefined {
  const kept = w.metadata?.annotations?.[REPLICAS_BEFORE_SLEEP];
  const replicas = w.spec?.replicas ?? 1;
  if (action === 'sleep') return replicas > 0 ? { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: String(replicas) } }, spec: { replicas: 0 } } : undefined;
  if (kept === undefined || !/^\d+$/.test(kept)) return undefined;
  return { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: null } }, spec: { replicas: Number(kept) } };
}

export async function kubePreviewCluster(kc: k8s.KubeConfig): Promise<Omit<PreviewCluster, keyof RunRecords | keyof RunTokens>> {
  const mod = await import('@kubernetes/client-node');
  const networking = kc.makeApiClient(mod.NetworkingV1Api);
  const apps = kc.makeApiClient(mod.AppsV1Api);
  const mergePatch = mod.setHeaderOptions('Content-Type', mod.PatchStrategy.MergePatch);
  return {
    ...(await kubeRunJobs(kc)),
    async ingressHosts(namespace) {
      const list = await networking.listNamespacedIngress({ namespace });
      const hosts = new Set<string>();
      for (const ingress of list.items) for (const rule of ingress.spec?.rules ?? []) if (rule.host) hosts.add(rule.host);
      return [...hosts];
    },
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
      return changed;
    },
  };
}
