/**
 * The service's HTTP application: Fastify with the TypeBox type provider, every route registered
 * from the contract (api/routes.ts), validated by Fastify's ajv. Bad input, a missing
 * or refused token, a taken name... all answer 4xx with `{ error: "one line" }`.
 */
import rateLimit from '@fastify/rate-limit';
import { SERVICE_VERSION_HEADER } from '../api/routes.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { type FastifyError, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { App, ServiceDeps, ServiceConfig } from './service-deps.ts';
import { ApiError, oneLine } from './errors.ts';
import { authenticator } from './auth.ts';
import { proxyTrust } from './client-address.ts';
import { html, PAGE_HEADERS, page } from './pages/html.ts';
import { registerAnalyticsRoutes } from './routes/analytics.ts';
import { registerBuildRoutes } from './routes/builds.ts';
import { type DashboardCluster, kubeDashboardCluster } from './dashboard/kube-cluster.ts';
import { WatchHub } from './dashboard/hub.ts';
import { NamespaceHub } from './dashboard/namespace-hub.ts';
import { registerDashboardPages } from './routes/dashboard-pages.ts';
import type { KubeCredentialSource } from './kube-credentials.ts';
import { registerKubeCredentialRoutes } from './routes/kube-credentials.ts';
import { registerInfoRoutes } from './routes/info.ts';
import { registerLoginRoutes } from './routes/login.ts';
import { namespaceDeps, type OwnerClusterFactory, registerNamespaceRoutes } from './routes/namespaces.ts';
import type { ClusterFactory } from './pipelines/acting-user.ts';
import type { PipelineCluster } from './pipelines/cluster.ts';
import { defaultCluster, registerPipelineRoutes } from './routes/pipelines.ts';
import { registerDashboardLogs } from './routes/dashboard-logs.ts';
import { registerDashboardRuns } from './routes/dashboard-runs.ts';
import { actingUser } from './pipelines/acting-user.ts';
import { previewDeps, registerPreviewRoutes } from './routes/previews.ts';
import type { PreviewCluster } from './previews/previews.ts';
import { registerSecretRoutes } from './routes/secrets.ts';
import { registerTokenRoutes } from './routes/tokens.ts';
import { registerUserRoutes } from './routes/users.ts';
import type { Store } from './store/store.ts';
import { namespaceWaking } from './waking/namespace-waking.ts';
import { registerWakingRoute, type WakingDeps } from './waking/route.ts';

export type { App, ServiceDeps, ServiceConfig } from './service-deps.ts';

export interface AppOptions {
  store: Store;
  config: ServiceConfig;
  now?: () => Date;
  /** Where log lines go (tests read them); default stdout. false: no log. */
  logStream?: NodeJS.WritableStream | false;
  logLevel?: string;
  /** Where users' Kubernetes credentials come from; absent: the route answers 503. */
  kubeCredentials?: KubeCredentialSource;
  /** Pipeline runs act on the cluster with a user's token through this (the unit tests' fake; default client-node). */
  pipelineCluster?: ClusterFactory<PipelineCluster>;
  /** The same for preview environments (a pipeline cluster that also lists Ingress hosts). */
  previewCluster?: ClusterFactory<PreviewCluster>;
  /** The dashboard's view of the cluster (the unit tests' fake; default: users' tokens from kubeCredentials). */
  dashboardCluster?: DashboardCluster;
  /** How often an open live page's rights are asked again (default a minute). */
  dashboardRecheckMs?: number;
  /** Namespace sleep and wake act on the owner's side of the cluster through this (default client-node). */
  ownerCluster?: OwnerClusterFactory;
  /** What the waking page reads of namespaces and the wake it starts; absent: the service's own (waking/namespace-waking.ts). */
  waking?: Omit<WakingDeps, 'key'>;
}

/**
 * Paths pino hides in every log line (the request logger logs no header nor body, but a handler's
 * or a plugin's line could carry them).
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  'value',
  'values',
  '*.token',
  '*.value',
  '*.values',
  '*.hash',
];

export async function buildApp(opts: AppOptions): Promise<App> {
  let methodsAt: (path: string) => string[] = () => [];
  const logger =
    opts.logStream === false
      ? false
      : { level: opts.logLevel ?? 'info', redact: { paths: REDACTED_PATHS, censor: '***' }, ...(opts.logStream ? { stream: opts.logStream } : {}) };
  const app = Fastify({
    logger,
    // Behind the ingress the client's address is the X-Forwarded-For entry the ingress added, the
    // last one, and only on a connection from the ingress itself: any other peer (a pod in a user's
    // namespace dialling the Service) could write any address there to escape its rate limit.
    trustProxy: proxyTrust(opts.config.trustedProxyAddresses ?? [], opts.config.trustedProxies ?? 1),
    bodyLimit: 256 * 1024,
    // A stopping replica still serves what arrives on connections the ingress already holds open
    // (Fastify's default answers those 503 with a body outside the contract), and closes each one
    // after its response (onSend below), so the proxy moves on to the other replica.
    return503OnClosing: false,
    // Longer than any path parameter the contract allows (a secret's name: 253 characters), so the
    // schema, not the router, refuses one that is too long; a longer one still gets the one-line shape.
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER },
    frameworkErrors: (err, _request, reply: FastifyReply) => {
      const tooLong = err.code === 'FST_ERR_MAX_PARAM_LENGTH';
      void reply
        .code(err.statusCode ?? 400)
        .send({ error: tooLong ? `a path parameter is longer than ${MAX_PATH_PARAMETER} characters` : oneLine(err.message) });
    },
    serverFactory: (handler, options) => httpServer(handler, options, (path) => methodsAt(path)),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, verbose: true } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  const ctx: ServiceDeps = { store: opts.store, config: opts.config, now: opts.now ?? (() => new Date()) };

  app.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
    if (err instanceof ApiError) return reply.code(err.statusCode).send({ error: oneLine(err.message) });
    if ((err as FastifyError).validation) return reply.code(400).send({ error: validationLine(err as FastifyError) });
    const status = (err as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send({ error: oneLine(err.message) });
    request.log.error({ err }, 'request failed');
    return reply.code(500).send({ error: 'internal error of the devtool service; its log has the details' });
  });
  methodsAt = routeMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = methodsAt(path);
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send({ error: `${request.method} ${path}: method not allowed, use ${allowed.join(' or ')}` });
    }
    // A browser (it asks for text/html first) gets a page; API clients keep the one-line JSON.
    if (wantsHtml(request.headers.accept) && request.method === 'GET') return reply.code(404).headers(PAGE_HEADERS).send(notFoundPage(path));
    return reply.code(404).send({ error: `no route ${request.method} ${path}` });
  });

  await app.register(rateLimit, {
    global: false,
    max: opts.config.rateLimit.max,
    timeWindow: opts.config.rateLimit.timeWindowMs,
    errorResponseBuilder: (_req, context) => new ApiError(429, `too many requests: try again in ${Math.ceil(context.ttl / 1000)} s`),
  });

  app.get('/healthz', { logLevel: 'warn' }, async () => ({ ok: true }));
  app.get('/readyz', { logLevel: 'warn' }, async (request, reply) => {
    try {
      await ctx.store.ping();
      return { ok: true };
    } catch (err) {
      request.log.warn({ err }, 'store unreachable');
      return reply.code(503).send({ error: 'the Kubernetes API server cannot be reached' });
    }
  });

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
    reply.header(SERVICE_VERSION_HEADER, ctx.config.version);
  });

  const auth = authenticator(ctx);
  registerAnalyticsRoutes(app, ctx, auth);
  registerInfoRoutes(app, ctx, auth);
  registerTokenRoutes(app, ctx, auth);
  registerUserRoutes(app, ctx, auth);
  const namespaces = namespaceDeps(ctx, opts.kubeCredentials, opts.ownerCluster);
  const previews = previewDeps(ctx, opts.kubeCredentials, opts.previewCluster);
  registerNamespaceRoutes(app, ctx, auth, namespaces);
  registerSecretRoutes(app, ctx, auth);
  const dashboardCluster =
    opts.dashboardCluster ??
    (opts.kubeCredentials && kubeDashboardCluster(opts.kubeCredentials, (err, what) => app.log.warn({ err }, `dashboard: ${what} failed`)));
  const hub =
    dashboardCluster &&
    new WatchHub(dashboardCluster, {
      ownerOf: async (namespace) => (await ctx.store.getNamespace(namespace))?.owner,
      recheckMs: opts.dashboardRecheckMs ?? 60_000,
    });
  const store = ctx.store;
  const namespaceHub =
    store.watchNamespaces &&
    new NamespaceHub({ watchNamespaces: (sink) => store.watchNamespaces!(sink) }, (err) => app.log.warn({ err }, 'dashboard: watch of namespaces failed'));
  const runsAs = actingUser(ctx, opts.kubeCredentials, opts.pipelineCluster ?? defaultCluster);
  registerLoginRoutes(app, ctx, (scope) => {
    registerDashboardPages(scope, ctx, {
      ...(dashboardCluster ? { cluster: dashboardCluster } : {}),
      ...(hub ? { hub } : {}),
      ...(namespaceHub ? { namespaceHub } : {}),
      runsAs,
      namespaces,
      previews,
    });
    registerDashboardLogs(scope, ctx, dashboardCluster, hub);
    registerDashboardRuns(scope, ctx, runsAs);
  });
  registerKubeCredentialRoutes(app, opts.kubeCredentials, auth);
  registerBuildRoutes(app, ctx, auth);
  registerPipelineRoutes(app, ctx, auth, opts.kubeCredentials, opts.pipelineCluster);
  registerPreviewRoutes(app, auth, previews, ctx.config);
  registerWakingRoute(app, { key: ctx.config.frontDoorKey, ...(opts.waking ?? namespaceWaking(namespaces, app.log)) });
  return app;
}

/**
 * Fastify's own HTTP server, but for a request whose method Node parsed and could not name: Node
 * 20 before 20.20 leaves `req.method` undefined for QUERY, which no route matches and Fastify
 * answers in its own shape. It is refused here like any method the path does not take.
 */
function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void, options: FastifyServerOptions, methodsAt: (path: string) => string[]) {
  const server = createServer((req, res) => {
    if (req.method !== undefined) return handler(req, res);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const allowed = methodsAt(path);
    const [status, error] = allowed.length > 0 ? [405, `${path}: method not allowed, use ${allowed.join(' or ')}`] : [404, `no route at ${path}`];
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...(allowed.length > 0 ? { allow: allowed.join(', ') } : {}) });
    res.end(JSON.stringify({ error }));
  });
  // What Fastify sets on the server it makes itself.
  server.keepAliveTimeout = options.keepAliveTimeout ?? 72_000;
  server.requestTimeout = options.requestTimeout ?? 0;
  server.setTimeout(options.connectionTimeout ?? 0);
  if ((options.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket ?? 0;
  return server;
}

/** The longest path parameter the router takes. */
const MAX_PATH_PARAMETER = 256;

/**
 * The methods registered at a concrete path (`/api/v1/namespaces/web`: DELETE), from every route
 * added after this call: the not-found handler answers 405 and names them when a path exists under
 * other methods.
 */
function routeMethods(app: App): (path: string) => string[] {
  const known: { pattern: RegExp; method: string }[] = [];
  app.addHook('onRoute', (r) => {
    const literal = r.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pattern = new RegExp(`^${literal.replace(/:[A-Za-z]+/g, '[^/]+')}$`);
    for (const method of [r.method].flat()) known.push({ pattern, method });
  });
  return (path) => [...new Set(known.filter((k) => k.pattern.test(path)).map((k) => k.method))].sort();
}

/** ajv's first complaint as one line naming the field: `body.name: must match pattern ...`. */
function validationLine(err: FastifyError): string {
  const first = err.validation?.[0];
  if (!first) return oneLine(err.message);
  const where = `${err.validationContext ?? 'request'}${first.instancePath.replaceAll('/', '.')}`;
  if (first.keyword === 'additionalProperties') return `${where}: unknown field ${(first.params as { additionalProperty?: string }).additionalProperty}`;
  const rule = ((first as { parentSchema?: unknown }).parentSchema as { description?: string } | undefined)?.description;
  if (first.keyword === 'pattern' && rule) return oneLine(`${where}: invalid value: ${rule}`);
  const refused = ((first as { schema?: unknown }).schema as { description?: string } | undefined)?.description;
  if (first.keyword === 'not' && refused) return oneLine(`${where}: invalid value: ${refused}`);
  return oneLine(`${where}: ${first.message ?? 'invalid'}`);
}

/** Does this Accept header ask for a web page (a browser's navigation) rather than JSON? */
export function wantsHtml(accept: string | undefined): boolean {
  const first = (accept ?? '').split(',')[0]?.split(';')[0]?.trim().toLowerCase();
  return first === 'text/html' || first === 'application/xhtml+xml';
}

function notFoundPage(path: string): string {
  return page({
    title: 'Page not found',
    body: html`<p>There is no page at <code>${path}</code> on this devtool service.</p>
<p><a href="/">Home</a> · <a href="/login">Sign in</a></p>`,
  });
}
