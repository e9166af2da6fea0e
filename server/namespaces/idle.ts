/**
 * The idle sleep and deletion as pure functions of a namespace's marks, its times and the chart's
 * settings: when it was last used, when the service puts it to sleep and when it deletes it. The
 * sweep (sweeper.ts) records the activity it finds as LAST_ACTIVITY, so the list and this decision
 * read the Namespace alone.
 */
import type { NamespaceRecord } from '../store/store.ts';

export interface IdleSettings {
  /** A namespace idle this long is put to sleep (`sleep.afterIdle`); undefined: never. */
  sleepAfterMs?: number;
  /** A namespace idle this long is deleted (`sleep.deleteAfterIdle`), never a personal one; undefined: never. */
  deleteAfterMs?: number;
}

/** The latest of these times (RFC 3339; unreadable ones skipped), in ms; undefined when none. */
export function latest(times: readonly (string | undefined)[]): number | undefined {
  let best: number | undefined;
  for (const t of times) {
    const ms = t ? Date.parse(t) : Number.NaN;
    if (!Number.isNaN(ms) && (best === undefined || ms > best)) best = ms;
  }
  return best;
}

/**
 * When the namespace was last used, as far as its marks tell: the sweep's finding, the front
 * door's last request, the last wake, or else its creation (a new namespace is not idle).
 */
export function lastActivityOf(ns: NamespaceRecord): number | undefined {
  const m = ns.marks ?? {};
  return latest([ns.createdAt, m.lastActivity, m.lastRequest, m.wokenAt]);
}

export interface IdleSchedule {
  /** When it is put to sleep unless used before: absent while it sleeps, or without the setting. */
  sleepsAt?: number;
  /** When it is deleted unless used before: absent for a personal namespace, or without the setting. */
  deletesAt?: number;
}

/** The next automatic sleep and deletion. Previews have their own (previews/sweeper.ts): none here. */
export function idleSchedule(ns: NamespaceRecord, s: IdleSettings): IdleSchedule {
  if (ns.status === 'Terminating' || ns.preview) return {};
  const last = lastActivityOf(ns);
  if (last === undefined) return {};
  const schedule: IdleSchedule = {};
  if (s.sleepAfterMs !== undefined && !ns.marks?.sleepingSince) schedule.sleepsAt = last + s.sleepAfterMs;
  if (s.deleteAfterMs !== undefined && !ns.personal) schedule.deletesAt = last + s.deleteAfterMs;
  return schedule;
}

/** What the sweep does to the namespace now: delete it, put it to sleep, or nothing. */
export function idleDecision(ns: NamespaceRecord, s: IdleSettings, now: Date): 'delete' | 'sleep' | undefined {
  const { sleepsAt, deletesAt } = idleSchedule(ns, s);
  if (deletesAt !== undefined && deletesAt <= now.getTime()) return 'delete';
  if (sleepsAt !== undefined && sleepsAt <= now.getTime()) return 'sleep';
  return undefined;
}
