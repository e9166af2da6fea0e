/** What the service's parts share: its settings, the store, the clock, and the app's type. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { BuildkitUpstream } from './build-tunnel.ts';
import type { IdleSettings } from './namespaces/idle.ts';
import type { Store } from './store/store.ts';

/** How long a sign-in on the service's pages lasts when the chart sets no `service.sessionLength`. */
export const DEFAULT_SESSION_TTL_MS = 8 * 3600_000;

export interface ServiceConfig {
  version: string;
  /** The URL users reach the service at: named in "log in again with devtool context use <url>". */
  publicUrl?: string;
  endpointDomain?: string;
  /** The IngressClass endpoints' Ingresses name (DEVTOOL_INGRESS_CLASS), announced by GET /info and given to pipeline runs; absent: the cluster's default. */
  ingressClass?: string;
  registry?: string;
  /** The pipeline runner's image (DEVTOOL_RUNNER_IMAGE); without it pipeline routes answer 503. */
  runnerImage?: string;
  builder?: string;
  /** PEM of the CA users must trust (the front door's), handed out by GET /info. */
  certificate?: string;
  /**
   * How many proxies stand in front of the service (default 1, the ingress): the client address
   * (rate limits, logs) is the X-Forwarded-For entry the farthest of them added. 0: the socket's.
   */
  trustedProxies?: number;
  /**
   * The socket addresses (CIDRs) of those proxies: X-Forwarded-For is believed only on a
   * connection from one of them. Absent or empty: never (the socket's address is the client).
   */
  trustedProxyAddresses?: string[];
  /** The key the front door sends to the waking page (DEVTOOL_FRONT_DOOR_KEY_FILE); absent: the page refuses every request. */
  frontDoorKey?: string;
  /** Bearer token a scraper must send to GET /metrics (DEVTOOL_METRICS_TOKEN); absent: no /metrics. */
  metricsToken?: string;
  /** Requests per client address and window on the login and token routes. */
  rateLimit: { max: number; timeWindowMs: number };
  /** Failed sign-ins per account and window, per replica, before the account's sign-in is refused. */
  accountLoginLimit?: { max: number; timeWindowMs: number };
  /** Device codes waiting for approval: in all, and per client address (DEVTOOL_DEVICE_CODES_PENDING_*). */
  pendingDeviceCodes?: { total: number; perClient: number };
  /** Namespace names nobody may create (server/reserved-namespaces.ts adds kube-*, default, its own). */
  reservedNamespaces?: string[];
  /** The service's own namespace: reserved too. */
  serviceNamespace?: string;
  // login (browser, device code, pages)
  /** Who may create an account on the sign-up page: anyone, or the names listed. Default open (the chart's: allowList). */
  signup?: { mode: 'open' | 'allowList'; allow: string[] };
  /** How long a browser session lasts (DEVTOOL_SESSION_LENGTH; absent: DEFAULT_SESSION_TTL_MS). */
  sessionTtlMs?: number;
  /** Idle namespaces' automatic sleep and deletion (DEVTOOL_SLEEP_AFTER_IDLE, DEVTOOL_DELETE_AFTER_IDLE); absent: never. */
  namespaceIdle?: IdleSettings;
  // hosted builds
  /** The chart's BuildKit daemon (DEVTOOL_BUILDKIT_ADDRESS); absent: no `builds` capability. */
  buildkit?: BuildkitUpstream;
}

/** What the handlers share. */
export interface ServiceDeps {
  store: Store;
  config: ServiceConfig;
  now: () => Date;
}

export type App = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;
