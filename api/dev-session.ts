/**
 * What a running `devtool up` publishes about its session: one annotation on its dev Deployment
 * (the mirror `up` runs), written with the developer's own credentials while `up` runs. The
 * service's dashboard shows it and its idle sleep counts it as activity; neither trusts it for
 * anything else, since whoever may edit the Deployment may write it: a reader passes the
 * annotation's value through `decodeDevSession`, which returns undefined for anything malformed.
 *
 * The value is JSON of `DevSessionState`, at most DEV_SESSION_MAX_BYTES bytes of UTF-8. `up` writes
 * it when the session is ready, on each change of its sync state, conflict copies or connection (at
 * most once every DEV_SESSION_MIN_INTERVAL_MS), and at least every DEV_SESSION_HEARTBEAT_MS; on
 * its exit it writes the state once more with `endedAt`. `down` deletes the Deployment, and the
 * annotation with it. A session whose heartbeat is older than DEV_SESSION_STALE_MS ended without
 * saying so (the machine slept, the process was killed).
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** The annotation on the dev Deployment that holds the session's state. */
export const DEV_SESSION_ANNOTATION = 'devtool.dev/session';
/** The bound of the annotation's value, in bytes of UTF-8 (Kubernetes allows 256 KiB for all of an object's annotations). */
export const DEV_SESSION_MAX_BYTES = 4096;
/** `up` writes the state at most this often, however often it changes. */
export const DEV_SESSION_MIN_INTERVAL_MS = 5_000;
/** `up` writes the state at least this often while it runs, changed or not. */
export const DEV_SESSION_HEARTBEAT_MS = 30_000;
/** A heartbeat older than this: the session is gone (three heartbeats missed). */
export const DEV_SESSION_STALE_MS = 90_000;
/** The latest conflict copies listed (the total is counted apart). */
export const DEV_SESSION_CONFLICTS_MAX = 5;
/** The forwards listed; a session with more lists the first ones. */
export const DEV_SESSION_FORWARDS_MAX = 16;
/** A conflict copy's path, longer, keeps its end (the file's name). */
export const DEV_SESSION_PATH_MAX = 200;
/** A sync error's one line. */
export const DEV_SESSION_LINE_MAX = 200;
/** The format's version: a reader refuses any other. */
export const DEV_SESSION_FORMAT = 1;

/** RFC 3339 in UTC as Date.toISOString() writes it. */
const TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,3})?Z$';
const Time = Type.String({ pattern: TIME_PATTERN, maxLength: 24 });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const DevSessionSync = Type.Union(
  [
    Type.Object({ state: Type.Literal('off') }, { additionalProperties: false, description: 'The dev container syncs no folder' }),
    Type.Object({ state: Type.Literal('starting') }, { additionalProperties: false, description: 'Before the first sync is done' }),
    Type.Object({ state: Type.Literal('watching') }, { additionalProperties: false, description: 'Both ends have everything; local edits are watched' }),
    Type.Object(
      {
        state: Type.Literal('syncing'),
        toReceive: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Files this machine still needs from the container' }),
        toSend: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Files the container still needs from this machine' }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { state: Type.Literal('error'), error: Type.String({ minLength: 1, maxLength: DEV_SESSION_LINE_MAX, description: 'What the sync reports, one line' }) },
      { additionalProperties: false },
    ),
  ],
  { description: 'The file sync as `up` sees it' },
);

export const DevSessionState = Type.Object(
  {
    format: Type.Literal(DEV_SESSION_FORMAT),
    user: Type.String({ minLength: 1, maxLength: 63, description: "The service's user of the context, else the local user name: as written, unverified" }),
    version: Type.String({ minLength: 1, maxLength: 64, description: 'The devtool version `up` runs' }),
    startedAt: Time,
    heartbeatAt: Time,
    endedAt: Type.Optional(Time),
    sync: DevSessionSync,
    conflicts: Type.Object(
      {
        total: Count,
        latest: Type.Array(Type.String({ minLength: 1, maxLength: DEV_SESSION_PATH_MAX }), {
          maxItems: DEV_SESSION_CONFLICTS_MAX,
          description: 'The newest conflict copies, oldest first: paths from the project folder',
        }),
      },
      { additionalProperties: false },
    ),
    forwards: Type.Array(
      Type.Object(
        {
          local: Type.Integer({ minimum: 1, maximum: 65535, description: 'The port on localhost of the developer' }),
          remote: Type.String({ minLength: 1, maxLength: 80, description: 'service:port in the namespace' }),
        },
        { additionalProperties: false },
      ),
      { maxItems: DEV_SESSION_FORWARDS_MAX },
    ),
    connection: Type.Union([
      Type.Object({ state: Type.Literal('connected') }, { additionalProperties: false }),
      Type.Object({ state: Type.Literal('reconnecting'), since: Time }, { additionalProperties: false }),
    ]),
  },
  { additionalProperties: false },
);
export type DevSessionState = Static<typeof DevSessionState>;
export type DevSessionSync = Static<typeof DevSessionSync>;

/** The size of a value as the bound counts it. */
export function devSessionBytes(value: string): number {
  return new TextEncoder().encode(value).length;
}

/**
 * The session state an annotation's value holds, or undefined when it is not one: not a string,
 * over the bound, not JSON, or not exactly of the schema (an extra field, a wrong type, a string or
 * a list over its bound, another format).
 */
export function decodeDevSession(value: unknown): DevSessionState | undefined {
  // The length in UTF-16 units is at most the UTF-8 bytes: the cheap check first.
  if (typeof value !== 'string' || value.length > DEV_SESSION_MAX_BYTES || devSessionBytes(value) > DEV_SESSION_MAX_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  return Value.Check(DevSessionState, parsed) ? parsed : undefined;
}
