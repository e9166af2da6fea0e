/** A namespace as the API shows it (api/schemas.ts Namespace): its status, its sleep, and its next automatic sleep and deletion. */
import type { NamespaceBody, NamespaceSleepBody } from '../../api/routes.ts';
import type { NamespaceRecord } from '../store/store.ts';
import { type IdleSettings, idleSchedule } from './idle.ts';

function sleepOf(ns: NamespaceRecord): NamespaceSleepBody | undefined {
  // A preview sleeps as a preview (previews/sleep.ts): its own record says since when.
  if (ns.preview?.sleepingSince) return { state: 'Sleeping', since: ns.preview.sleepingSince };
  const m = ns.marks ?? {};
  if (m.sleepingSince) return { state: 'Sleeping', since: m.sleepingSince, ...(m.sleptBy ? { by: m.sleptBy } : {}) };
  if (m.wakingSince) return { state: 'Waking', since: m.wakingSince };
  return undefined;
}

export function namespaceBody(ns: NamespaceRecord, idle: IdleSettings): NamespaceBody {
  const sleep = sleepOf(ns);
  const { sleepsAt, deletesAt } = idleSchedule(ns, idle);
  return {
    name: ns.name,
    status: ns.status,
    owner: ns.owner,
    personal: ns.personal,
    ...(sleep ? { sleep } : {}),
    ...(sleepsAt !== undefined ? { sleepsAt: new Date(sleepsAt).toISOString() } : {}),
    ...(deletesAt !== undefined ? { deletesAt: new Date(deletesAt).toISOString() } : {}),
  };
}
