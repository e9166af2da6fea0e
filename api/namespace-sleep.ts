/**
 * How a namespace the service made records that it sleeps, wakes and was last used: annotations on
 * the Namespace object, which only the service and the front door write (a plain user cannot patch
 * a Namespace). The service writes the sleep marks; the front door reads them to send requests for
 * a sleeping namespace's endpoints to the service's waking page, and writes the last request time.
 * Values are RFC 3339 times.
 */

/** Set when the namespace was put to sleep; removed when it is woken. */
export const SLEEPING_SINCE = 'devtool.dev/sleeping-since';
/** Set by a wake; removed once the namespace's workloads are available again (or given up on). */
export const WAKING_SINCE = 'devtool.dev/waking-since';
/** The last request the front door passed to one of the namespace's endpoints (written at most once a minute). */
export const LAST_REQUEST = 'devtool.dev/last-request';
/** Who or what put the namespace to sleep: a user's name, or `idle` for the automatic sleep. */
export const SLEPT_BY = 'devtool.dev/slept-by';
/** When the namespace was last woken (kept after WAKING_SINCE is removed): a wake counts as activity. */
export const WOKEN_AT = 'devtool.dev/woken-at';
/**
 * The latest activity the service's idle sweep found in the namespace (its environment records,
 * pipeline runs, LAST_REQUEST, the last wake, `up` sessions): the next automatic sleep and deletion
 * are counted from it, so listing namespaces reads no workload.
 */
export const LAST_ACTIVITY = 'devtool.dev/last-activity';

/** On a sleeping namespace's Deployments and StatefulSets: the replicas each had (a running `up` reads it on its dev Deployment). */
export const REPLICAS_BEFORE_SLEEP = 'devtool.dev/replicas-before-sleep';
/** On a CronJob the sleep suspended: its own `suspend` before (`true` or `false`). */
export const SUSPEND_BEFORE_SLEEP = 'devtool.dev/suspend-before-sleep';
