/**
 * The activity a dev Deployment of `up` tells of, for the idle sweep: the session state `up`
 * publishes on it (api/dev-session.ts), its heartbeat or its end, whichever is later. A dev
 * Deployment without the annotation runs an `up` older than the publishing (or one not ready yet):
 * while it has replicas it counts as used now, as nothing else tells when it was. A malformed
 * annotation tells nothing. Whoever may edit the Deployment may write the annotation; the sweep
 * caps any time at its own clock, so a forged one can keep the namespace awake no longer than a
 * real `up` could.
 */
import type * as k8s from '@kubernetes/client-node';
import { DEV_SESSION_ANNOTATION, decodeDevSession } from '../../api/dev-session.ts';

export function devSessionActivity(d: Pick<k8s.V1Deployment, 'metadata' | 'spec'>, now: Date): string | undefined {
  const value = d.metadata?.annotations?.[DEV_SESSION_ANNOTATION];
  if (value === undefined) return (d.spec?.replicas ?? 1) > 0 ? now.toISOString() : undefined;
  const session = decodeDevSession(value);
  if (!session) return undefined;
  return session.endedAt && session.endedAt > session.heartbeatAt ? session.endedAt : session.heartbeatAt;
}
