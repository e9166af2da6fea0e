/** OwnerCluster on Kubernetes (client-node), with the owner's token: the shared workload scaling, and the activity its objects tell of. */
import type * as k8s from '@kubernetes/client-node';
import { DEV_LABEL, ENVIRONMENT_STATE_LABEL } from '../../api/activity-labels.ts';
import { kubeNamespaceWorkloads } from '../workloads/kube-workloads.ts';
import { devSessionActivity } from './dev-session-activity.ts';
import type { OwnerCluster } from './sleep.ts';

export async function kubeOwnerCluster(kc: k8s.KubeConfig): Promise<OwnerCluster> {
  const mod = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(mod.CoreV1Api);
  const apps = kc.makeApiClient(mod.AppsV1Api);
  return {
    ...(await kubeNamespaceWorkloads(kc)),
    async activityTimes(namespace, now) {
      const [records, dev] = await Promise.all([
        core.listNamespacedConfigMap({ namespace, labelSelector: ENVIRONMENT_STATE_LABEL }),
        apps.listNamespacedDeployment({ namespace, labelSelector: DEV_LABEL }),
      ]);
      return [...records.items.flatMap((cm) => cm.data?.['updated'] ?? []), ...dev.items.flatMap((d) => devSessionActivity(d, now) ?? [])];
    },
  };
}
