/**
 * What moves namespaces on when nobody asks, on every replica (as previews/sweeper.ts): waking
 * namespaces lose their mark once available (often: the front door's waking page waits on it), and
 * with the chart's `sleep.afterIdle` / `sleep.deleteAfterIdle`, idle namespaces are put to sleep
 * (SLEPT_BY `idle`) or deleted, never a personal one (it only sleeps). Replicas sweeping at once do
 * no harm: every step is idempotent (a mark set twice, a sleep of a sleeping namespace, a delete
 * of a namespace being deleted).
 */
import type { NamespaceRecord } from '../store/store.ts';
import { type IdleSettings, idleDecision, latest, lastActivityOf } from './idle.ts';
import { type NamespaceDeps, settleWaking, sleepNamespace } from './sleep.ts';

export interface WakingReport {
  /** Waking namespaces whose workloads are all available: the mark is gone. */
  awake: string[];
  /** Waking namespaces that waited too long: the mark is gone all the same. */
  gaveUp: string[];
  failed: { name: string; error: string }[];
}

export interface IdleReport {
  /** Put to sleep, with how long each had been idle (ms). */
  slept: { name: string; idleMs: number }[];
  /** Deleted, with how long each had been idle (ms). */
  deleted: { name: string; idleMs: number }[];
  failed: { name: string; error: string }[];
}

/** The namespaces the service made that sleep here: not previews (they sleep as previews), not those being deleted. */
const sleepers = (list: NamespaceRecord[]) => list.filter((ns) => ns.status === 'Active' && !ns.preview);

export async function settleWakingNamespaces(deps: NamespaceDeps): Promise<WakingReport> {
  const report: WakingReport = { awake: [], gaveUp: [], failed: [] };
  for (const ns of sleepers(await deps.store.listNamespaces())) {
    if (!ns.marks?.wakingSince) continue;
    try {
      const result = await settleWaking(deps, ns);
      if (result === 'awake') report.awake.push(ns.name);
      if (result === 'gave-up') report.gaveUp.push(ns.name);
    } catch (err) {
      report.failed.push({ name: ns.name, error: (err as Error).message });
    }
  }
  return report;
}

export async function sweepIdleNamespaces(deps: NamespaceDeps, idle: IdleSettings): Promise<IdleReport> {
  const report: IdleReport = { slept: [], deleted: [], failed: [] };
  if (idle.sleepAfterMs === undefined && idle.deleteAfterMs === undefined) return report;
  const now = deps.now();
  for (const listed of sleepers(await deps.store.listNamespaces())) {
    try {
      const ns = await recordActivity(deps, listed, now);
      const decision = idleDecision(ns, idle, now);
      if (!decision) continue;
      const idleMs = now.getTime() - (lastActivityOf(ns) ?? now.getTime());
      if (decision === 'delete') {
        await deps.store.deleteNamespace(ns.name);
        report.deleted.push({ name: ns.name, idleMs });
      } else {
        await sleepNamespace(deps, ns.name, 'idle');
        report.slept.push({ name: ns.name, idleMs });
      }
    } catch (err) {
      report.failed.push({ name: listed.name, error: (err as Error).message });
    }
  }
  return report;
}

/**
 * Reads the activity the namespace's objects (as its owner sees them) and its pipeline runs tell
 * of, and records it as LAST_ACTIVITY when it is newer than the recorded one: the record with it.
 */
async function recordActivity(deps: NamespaceDeps, ns: NamespaceRecord, now: Date): Promise<NamespaceRecord> {
  const cluster = await deps.actAs(ns.owner);
  const runs = await deps.store.runs.listRecords(ns.name);
  const found = latest([...(await cluster.activityTimes(ns.name, now)), ...runs.flatMap((r) => [r.startedAt, r.finishedAt])]);
  if (found === undefined) return ns;
  // A clock ahead of ours (a laptop's `updated`) must not keep the namespace awake for ever.
  const seen = Math.min(found, now.getTime());
  const known = latest([ns.marks?.lastActivity]);
  if (known !== undefined && seen <= known) return ns;
  const lastActivity = new Date(seen).toISOString();
  await deps.store.setNamespaceMarks(ns.name, { lastActivity });
  return { ...ns, marks: { ...ns.marks, lastActivity } };
}
