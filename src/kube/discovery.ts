/**
 * Discovery of every namespaced resource kind that can be listed and deleted, so `destroy` finds
 * what any deploy command created (kubectl, helm, Compose), not only the kinds devtool knows.
 */
import type { KubeClient } from './client.ts';

export interface ResourceKind {
  /** `apps/v1`, or `v1` for the core group. */
  apiVersion: string;
  kind: string;
  /** Plural resource name used in paths. */
  resource: string;
}

interface APIResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; verbs: string[] }[];
}

interface APIGroupList {
  groups: { name: string; preferredVersion?: { groupVersion: string } }[];
}

/** Kinds that are only derived state or would be recreated by their owners; never deleted directly. */
const SKIPPED = new Set([
  'v1/Event',
  'events.k8s.io/v1/Event',
  'v1/Binding',
  'discovery.k8s.io/v1/EndpointSlice',
  'v1/Endpoints',
  'coordination.k8s.io/v1/Lease',
]);

export async function namespacedDeletableKinds(client: KubeClient): Promise<ResourceKind[]> {
  const groups = await client.getJson<APIGroupList>('/apis');
  const groupVersions = ['v1', ...groups.groups.map((g) => g.preferredVersion?.groupVersion).filter((v): v is string => Boolean(v))];
  const lists = await Promise.all(groupVersions.map((gv) => client.getJson<APIResourceList>(gv === 'v1' ? '/api/v1' : `/apis/${gv}`).catch(() => undefined)));
  const kinds: ResourceKind[] = [];
  for (const list of lists) {
    if (!list) continue; // an aggregated API that is down must not block destroy
    for (const r of list.resources) {
      if (!r.namespaced || r.name.includes('/') || !r.verbs.includes('list') || !r.verbs.includes('delete')) continue;
      if (SKIPPED.has(`${list.groupVersion}/${r.kind}`)) continue;
      kinds.push({ apiVersion: list.groupVersion, kind: r.kind, resource: r.name });
    }
  }
  return kinds;
}
