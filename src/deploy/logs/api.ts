/** The PodLogApi of a client's namespace: pods listed and watched by label, logs from the pod log endpoint. */
import { Watch } from '@kubernetes/client-node';
import type { KubeClient } from '../../kube/client.ts';
import { openPodLog } from '../../kube/pod-log.ts';
import type { PodLogApi } from './stream.ts';

/** The server ends a watch after this long; the pods are then listed and watched anew (stream.ts). */
const WATCH_SECONDS = 300;

export function podLogApi(client: KubeClient): PodLogApi {
  const namespace = client.namespace;
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
  const selector = (labelSelector: string | undefined) => (labelSelector ? { labelSelector } : {});
  return {
    pods: async (labelSelector) => {
      const list = await client.core.listNamespacedPod({ namespace, ...selector(labelSelector) });
      return { items: list.items, ...(list.metadata?.resourceVersion ? { resourceVersion: list.metadata.resourceVersion } : {}) };
    },
    watchPods: async (labelSelector, resourceVersion, event, done) => {
      const query = { ...selector(labelSelector), allowWatchBookmarks: true, timeoutSeconds: WATCH_SECONDS, ...(resourceVersion ? { resourceVersion } : {}) };
      const controller = await new Watch(client.kc).watch(path, query, event, done);
      return () => controller.abort();
    },
    log: (run, query, data) => openPodLog(client, run.pod, run.container, query, data),
  };
}
