/** PreviewCluster on Kubernetes, less the service's records: the run's Jobs, Ingress hosts and workload scaling (workloads/), with a user's token. */
import type * as k8s from '@kubernetes/client-node';
import type { RunTokens } from '../pipelines/cluster.ts';
import type { RunRecords } from '../store/store.ts';
import { kubeRunJobs } from '../pipelines/kube-cluster.ts';
import { kubeNamespaceWorkloads } from '../workloads/kube-workloads.ts';
import type { PreviewCluster } from './previews.ts';

export async function kubePreviewCluster(kc: k8s.KubeConfig): Promise<Omit<PreviewCluster, keyof RunRecords | keyof RunTokens>> {
  const mod = await import('@kubernetes/client-node');
  const networking = kc.makeApiClient(mod.NetworkingV1Api);
  const workloads = await kubeNamespaceWorkloads(kc);
  return {
    ...(await kubeRunJobs(kc)),
    async ingressHosts(namespace) {
      const list = await networking.listNamespacedIngress({ namespace });
      const hosts = new Set<string>();
      for (const ingress of list.items) for (const rule of ingress.spec?.rules ?? []) if (rule.host) hosts.add(rule.host);
      return [...hosts];
    },
    scaleWorkloads: workloads.scaleWorkloads,
  };
}
