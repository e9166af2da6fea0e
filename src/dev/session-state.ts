/**
 * The annotation value of a running `up` session (api/dev-session.ts holds the format, its bound
 * and the readers' decoder): every field cut to its bound, so whatever the session holds, the
 * value is within DEV_SESSION_MAX_BYTES and decodes.
 */
import {
  DEV_SESSION_CONFLICTS_MAX,
  DEV_SESSION_FORWARDS_MAX,
  DEV_SESSION_LINE_MAX,
  DEV_SESSION_MAX_BYTES,
  DEV_SESSION_PATH_MAX,
  type DevSessionState,
} from '../../api/dev-session.ts';
import { oneLine } from '../base/text.ts';

const USER_MAX = 63;
const VERSION_MAX = 64;
const REMOTE_MAX = 80;

/** The value of the session annotation: JSON of `s`, each field within its bound and the whole within DEV_SESSION_MAX_BYTES. */
export function sessionAnnotationValue(s: DevSessionState): string {
  const state: DevSessionState = {
    ...s,
    user: head(s.user, USER_MAX) || '?',
    version: head(s.version, VERSION_MAX) || '?',
    sync: s.sync.state === 'error' ? { state: 'error', error: head(oneLine(s.sync.error), DEV_SESSION_LINE_MAX) || 'error' } : s.sync,
    conflicts: { total: s.conflicts.total, latest: s.conflicts.latest.slice(-DEV_SESSION_CONFLICTS_MAX).map(tail).filter(Boolean) },
    forwards: s.forwards.slice(0, DEV_SESSION_FORWARDS_MAX).map((f) => ({ local: f.local, remote: head(f.remote, REMOTE_MAX) || '?' })),
  };
  let value = JSON.stringify(state);
  // Escapes and wide characters can still take a value over: the lists go first, oldest conflict
  // and last forward each time; what is left then is within the bound whatever its characters.
  while (bytes(value) > DEV_SESSION_MAX_BYTES && (state.conflicts.latest.length > 0 || state.forwards.length > 0)) {
    if (state.conflicts.latest.length > 0) state.conflicts = { ...state.conflicts, latest: state.conflicts.latest.slice(1) };
    else state.forwards = state.forwards.slice(0, -1);
    value = JSON.stringify(state);
  }
  return value;
}

/** Who the session is: the service's user name on a service context, else the name of the user on this machine. */
export function sessionUser(context: { isDevtool: boolean; userId?: string }, localUser: () => string): string {
  if (context.isDevtool && context.userId) return context.userId;
  try {
    return localUser() || 'unknown';
  } catch {
    return 'unknown';
  }
}

function bytes(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** At most `max` characters of `s`, from its start. */
function head(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A conflict copy's path cut from its start: its end names the file. */
function tail(path: string): string {
  return path.length <= DEV_SESSION_PATH_MAX ? path : `…${path.slice(-(DEV_SESSION_PATH_MAX - 1))}`;
}
