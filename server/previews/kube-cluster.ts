/** PreviewCluster on Kubernetes: the pipeline cluster, plus the Ingress hosts of a namespace, with a user's token. */
import type * as k8s from '@kubernetes/client-node';
import { kubePipelineCluster } from '../pipelines/kube-cluster.ts';
import type { PreviewCluster } from './previews.ts';

export async function kubePreviewCluster(kc: k8s.KubeConfig): Promise<PreviewCluster> {
  const mod = await import('@kubernetes/client-node');
  const networking = kc.makeApiClient(mod.NetworkingV1Api);
  return {
    ...(await kubePipelineCluster(kc)),
    async ingressHosts(namespace) {
      const list = await networking.listNamespacedIngress({ namespace });
      const hosts = new Set<string>();
      for (const ingress of list.items) for (const rule of ingress.spec?.rules ?? []) if (rule.host) hosts.add(rule.host);
      return [...hosts];
    },
  };
}
