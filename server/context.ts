/** What the service's parts share: its settings, the store, the clock, and the app's type. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { BuildkitUpstream } from './build-tunnel.ts';
import type { Store } from './store/store.ts';

export interface ServiceConfig {
  version: string;
  /** The URL users reach the service at: named in "log in again with devtool context use <url>". */
  publicUrl?: string;
  endpointDomain?: string;
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
  /** Bearer token a scraper must send to GET /metrics (DEVTOOL_METRICS_TOKEN); open when absent. */
  metricsToken?: string;
  /** Requests per client address and window on the login and token routes. */
  rateLimit: { max: number; timeWindowMs: number };
  // login (browser, device code, pages)
  /** Who may create an account on the sign-up page: anyone, or the names listed. Default open. */
  signup?: { mode: 'open' | 'allowList'; allow: string[] };
  /** How long a browser session lasts (default 8 hours). */
  sessionTtlMs?: number;
  // hosted builds
  /** The chart's BuildKit daemon (DEVTOOL_BUILDKIT_ADDRESS); absent: no `builds` capability. */
  buildkit?: BuildkitUpstream;
}

/** What the handlers share. */
export interface AppContext {
  store: Store;
  config: ServiceConfig;
  now: () => Date;
}

export type App = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;
