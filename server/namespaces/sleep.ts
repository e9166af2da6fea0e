/**
 * Sleep and wake of any namespace the service made (api/namespace-sleep.ts names the marks). A
 * sleeping namespace keeps everything but running pods: its Deployments and StatefulSets (a dev
 * Deployment of `up` among them) are scaled to zero and its CronJobs suspended, each keeping what
 * to restore (workloads/scaling.ts), and only then does the Namespace get SLEEPING_SINCE and
 * SLEPT_BY, so the front door never sends requests to the waking page of a namespace still running.
 * Waking restores exactly that and marks the namespace WAKING_SINCE until its workloads are
 * available again (settleWaking, called by the sweep of every replica).
 *
 * The workload changes act as the namespace's owner (a token of the owner's ServiceAccount), never
 * with the service's rights; the marks are the service's own patch of the Namespace, which no user
 * can write. Who may ask is the routes' question (routes/namespaces.ts): these functions also serve
 * the system (the idle sweep, a wake on a request to a sleeping namespace's endpoint).
 */
import { ApiError } from '../errors.ts';
import type { NamespaceRecord, RunRecords, Store } from '../store/store.ts';
import type { NamespaceWorkloads } from '../workloads/kube-workloads.ts';

/** How long a wake waits for the workloads to be available before the waking mark is removed all the same. */
export const WAKING_GIVE_UP_MS = 5 * 60_000;

/** The namespace as its owner sees it (the owner's ServiceAccount token). */
export interface OwnerCluster extends NamespaceWorkloads {
  /**
   * The activity the namespace's objects tell of, as RFC 3339 times: its environment records'
   * `updated`, and `now` while a dev container of `up` runs there.
   */
  activityTimes(namespace: string, now: Date): Promise<string[]>;
}

export interface NamespaceDeps {
  store: Pick<Store, 'getNamespace' | 'listNamespaces' | 'setNamespaceMarks' | 'deleteNamespace'> & { runs: Pick<RunRecords, 'listRecords'> };
  /** The cluster as `owner` sees it. */
  actAs(owner: string): Promise<OwnerCluster>;
  now(): Date;
}

/** A namespace the service made, that sleep and wake may change: a one-line refusal otherwise. */
async function sleepable(deps: NamespaceDeps, name: string): Promise<NamespaceRecord> {
  const ns = await deps.store.getNamespace(name);
  if (!ns) throw new ApiError(404, `namespace ${name} does not exist or is not managed by devtool`);
  if (ns.status === 'Terminating') throw new ApiError(409, `namespace ${name} is being deleted: it cannot sleep or wake`);
  if (ns.preview) throw new ApiError(409, `namespace ${name} is a preview environment: devtool preview sleep ${name} / devtool preview wake ${name}`);
  return ns;
}

/** Puts the namespace to sleep; `by` is a user's name or `idle`. Sleeping twice changes nothing (the first sleep's marks stay). */
export async function sleepNamespace(deps: NamespaceDeps, name: string, by: string): Promise<NamespaceRecord> {
  const ns = await sleepable(deps, name);
  const cluster = await deps.actAs(ns.owner);
  // Always scaled, even when marked asleep: whatever was started meanwhile goes to sleep too.
  await cluster.scaleWorkloads(name, 'sleep');
  const m = ns.marks ?? {};
  if (m.sleepingSince) return ns;
  // A namespace still waking sleeps again: the waking mark goes with the sleep's.
  const sleepingSince = deps.now().toISOString();
  if (!(await deps.store.setNamespaceMarks(name, { sleepingSince, sleptBy: by, wakingSince: null }))) {
    throw new ApiError(404, `namespace ${name} does not exist`);
  }
  const { wakingSince: _, ...rest } = m;
  return { ...ns, marks: { ...rest, sleepingSince, sleptBy: by } };
}

/**
 * Wakes the namespace, as its owner, whoever asks: a user through the route (who may is checked
 * there), or the service itself on a request to one of the namespace's endpoints. A namespace
 * awake already stays as it is, but a sleep cut short (a service pod stopping between the
 * scaling and the marks) is undone all the same.
 */
export async function wakeNamespace(deps: NamespaceDeps, name: string): Promise<NamespaceRecord> {
  const ns = await sleepable(deps, name);
  const cluster = await deps.actAs(ns.owner);
  const changed = await cluster.scaleWorkloads(name, 'wake');
  const m = ns.marks ?? {};
  if (!m.sleepingSince && changed === 0) return ns;
  const now = deps.now().toISOString();
  const wakingSince = m.wakingSince && !m.sleepingSince ? m.wakingSince : now;
  const marks = { sleepingSince: null, sleptBy: null, wakingSince, wokenAt: now };
  if (!(await deps.store.setNamespaceMarks(name, marks))) throw new ApiError(404, `namespace ${name} does not exist`);
  const { sleepingSince: _s, sleptBy: _b, ...rest } = m;
  return { ...ns, marks: { ...rest, wakingSince, wokenAt: now } };
}

/**
 * A waking namespace whose Deployments and StatefulSets all have their replicas available, or
 * that has waited WAKING_GIVE_UP_MS, loses its waking mark. Answers what happened; removing the
 * mark twice (two replicas) is harmless.
 */
export async function settleWaking(deps: NamespaceDeps, ns: NamespaceRecord): Promise<'awake' | 'gave-up' | 'waiting'> {
  const since = ns.marks?.wakingSince;
  if (!since || ns.marks?.sleepingSince) return 'waiting';
  const cluster = await deps.actAs(ns.owner);
  const waiting = await cluster.unavailableWorkloads(ns.name);
  const late = deps.now().getTime() - Date.parse(since) >= WAKING_GIVE_UP_MS || Number.isNaN(Date.parse(since));
  if (waiting.length > 0 && !late) return 'waiting';
  await deps.store.setNamespaceMarks(ns.name, { wakingSince: null });
  return waiting.length > 0 ? 'gave-up' : 'awake';
}
