/**
 * The reads behind the quota and limit range checks of `up` and `deploy` (namespace-limits.ts): the
 * namespace's ResourceQuotas and LimitRanges, what some pods use of the quotas, and which claims
 * exist. A narrow view of the cluster, so the checks run against an in-memory one in unit tests.
 */
import { isNotFound, type KubeClient } from './client.ts';
import { addUsage, NO_LIMITS, namespaceLimitsOf, podUsage, type NamespaceLimits, type Usage } from './namespace-limits.ts';

export interface NamespaceLimitsApi {
  /**
   * The namespace's quotas and limit ranges. None when it has none, and when they may not be read
   * (RBAC): the API server's own admission still refuses what breaks them.
   */
  limits(): Promise<NamespaceLimits>;
  /** What the selected pods use of quotas now: the pods a swap or a deploy removes. Pods that have ended use nothing. */
  podsUsage(labelSelector: string): Promise<Usage>;
  /** Whether the claim exists already (it then asks for no new room). */
  claimExists(name: string): Promise<boolean>;
}

export function namespaceLimitsApi(client: KubeClient, debug: (line: string) => void = () => undefined): NamespaceLimitsApi {
  const namespace = client.namespace;
  return {
    async limits() {
      try {
        const [quotas, ranges] = await Promise.all([
          client.core.listNamespacedResourceQuota({ namespace }),
          client.core.listNamespacedLimitRange({ namespace }),
        ]);
        return namespaceLimitsOf(quotas.items, ranges.items);
      } catch (err) {
        debug(`cannot read the quotas and limit ranges of namespace ${namespace} (left to the API server): ${(err as Error).message}`);
        return NO_LIMITS;
      }
    },
    async podsUsage(labelSelector) {
      const pods = (await client.core.listNamespacedPod({ namespace, labelSelector })).items;
      return addUsage(
        ...pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && p.spec).map((p) => podUsage(p.spec!, NO_LIMITS)),
      );
    },
    async claimExists(name) {
      try {
        await client.core.readNamespacedPersistentVolumeClaim({ name, namespace });
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
  };
}
