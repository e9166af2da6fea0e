/**
 * The waking page's view of namespaces and its wake, on the service's own sleep and wake
 * (server/namespaces/sleep.ts): what a namespace is doing from its marks, and a wake as the system
 * (the owner's credentials) that is then followed until the workloads are available, so that
 * WAKING_SINCE goes, and the front door routes to the application, as soon as it answers rather
 * than at the next sweep of waking namespaces.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type NamespaceDeps, type OwnerCluster, settleWaking, wakeNamespace } from '../namespaces/sleep.ts';
import type { NamespaceRest, WakingDeps } from './route.ts';
import { WakeOnce } from './wake-once.ts';

/** How often a wake started here looks at the workloads. */
export const FOLLOW_MS = 1_000;

export function namespaceWaking(deps: NamespaceDeps, log: FastifyBaseLogger, followMs = FOLLOW_MS): Omit<WakingDeps, 'key'> {
  return {
    rest: async (name) => restOf(await deps.store.getNamespace(name)),
    wakes: new WakeOnce(
      (name) => wakeAndFollow(deps, name, followMs),
      (namespace, err) => log.warn({ namespace, error: (err as Error).message }, 'waking a namespace on a request failed'),
    ),
  };
}

function restOf(ns: Awaited<ReturnType<NamespaceDeps['store']['getNamespace']>>): NamespaceRest | undefined {
  // A preview sleeps as a preview (its own marks, `devtool preview wake`): not this page's.
  if (!ns || ns.preview || ns.status === 'Terminating') return undefined;
  if (ns.marks?.wakingSince) return 'waking';
  if (ns.marks?.sleepingSince) return 'sleeping';
  return 'awake';
}

/**
 * Wakes the namespace, then settles it every `followMs` until its workloads are available (or the
 * wake gives up after WAKING_GIVE_UP_MS, as the sweep would). One token of the owner serves the
 * whole follow.
 */
async function wakeAndFollow(deps: NamespaceDeps, name: string, followMs: number): Promise<void> {
  let cluster: Promise<OwnerCluster> | undefined;
  const once: NamespaceDeps = {
    ...deps,
    actAs: (owner) => {
      cluster ??= deps.actAs(owner);
      return cluster;
    },
  };
  let ns = await wakeNamespace(once, name);
  while (ns.marks?.wakingSince && !ns.marks.sleepingSince) {
    await new Promise((r) => setTimeout(r, followMs));
    if ((await settleWaking(once, ns)) !== 'waiting') return;
    const now = await deps.store.getNamespace(name);
    if (!now) return;
    ns = now;
  }
}
