/**
 * The dashboard's pages (server/dashboard/): Home (`/`), a namespace (`/namespaces/<name>`), its
 * live updates (`/namespaces/<name>/events`, server-sent events fed by the watch hub), the create
 * and delete forms, and the live-update script. A page is for the signed-in browser session, or,
 * for scripts and tests, for the user of an `Authorization: Bearer` API token (read only: no forms).
 * Everything a page shows of a namespace is read with the viewer's own Kubernetes token, or, live,
 * from a shared watch the viewer was allowed into by its own access reviews (dashboard/hub.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateToken } from '../auth.ts';
import { type BrowserSession, csrfValid, currentSession } from '../browser-sessions.ts';
import type { DashboardCluster } from '../dashboard/kube-cluster.ts';
import { homePage, type HomeNamespace } from '../dashboard/home-page.ts';
import type { Subscriber, Subscription, WatchHub } from '../dashboard/hub.ts';
import { LIVE_SCRIPT, LIVE_SCRIPT_PATH } from '../dashboard/live-script.ts';
import { KINDS, type Kind, podCounts, podSummary, SUMMARIZE, type Summary, snapshotOf, type NamespaceSnapshot } from '../dashboard/model.ts';
import { type NamespaceData, namespacePage, namespaceSections, type SectionId, when } from '../dashboard/namespace-page.ts';
import { lastActivityOf } from '../namespaces/idle.ts';
import { namespaceBody } from '../namespaces/view.ts';
import { ApiError } from '../errors.ts';
import { createNamespaceFor, deleteNamespaceAs, mayDelete } from '../namespaces/actions.ts';
import { html, LIVE_PAGE_HEADERS, page } from '../pages/html.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord, UserRecord } from '../store/store.ts';
import { formOf, refuseCsrf, requireSession, sendPage } from './login-pages.ts';

export interface DashboardDeps {
  /** Absent when the service hands out no Kubernetes credentials: pages show names and owners only. */
  cluster?: DashboardCluster;
  hub?: WatchHub;
}

/** Who looks at a page: a browser session (with its CSRF token), or an API token's user. */
export interface Viewer {
  user: UserRecord;
  session?: BrowserSession;
  /** Still signed in (the session or the token still valid)? Asked again while a live stream is open. */
  stillValid(): Promise<boolean>;
}

/** Bytes a live stream may hold unsent before its page is dropped as too slow. */
export const MAX_UNSENT = 256 * 1024;
/** How long changes are gathered into one update. */
const GATHER_MS = 30;
export const HEARTBEAT_MS = 25_000;
export const SESSION_RECHECK_MS = 60_000;

const SECTIONS_OF: Record<Kind, SectionId[]> = {
  pods: ['workloads'],
  deployments: ['workloads', 'sessions'],
  statefulsets: ['workloads'],
  environments: ['environments'],
  ingresses: ['environments'],
};
/** How often the dev containers are shown again unchanged: a session whose heartbeats stopped shows as gone. */
const SESSIONS_REFRESH_MS = 30_000;

export async function viewerOf(ctx: ServiceDeps, request: FastifyRequest, reply: FastifyReply): Promise<Viewer | undefined> {
  const header = request.headers.authorization;
  if (header) {
    const origin = `${request.protocol}://${request.host}`;
    try {
      const { user, token } = await authenticateToken(ctx, header, origin);
      if (token.scope === 'run') throw new ApiError(403, "a pipeline run's token cannot open the dashboard: use your own token");
      return {
        user,
        stillValid: () =>
          authenticateToken(ctx, header, origin).then(
            () => true,
            () => false,
          ),
      };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      sendPage(reply, err.statusCode, page({ title: 'Not signed in', error: err.message, body: html`<p><a href="/login">Sign in</a></p>` }));
      return undefined;
    }
  }
  const session = await requireSession(ctx, request, reply);
  if (!session) return undefined;
  const user = await ctx.store.getUser(session.user);
  if (!user || user.disabled) {
    sendPage(reply, 403, page({ title: 'Account disabled', error: 'This account is disabled: ask the operator of this service.', body: html`` }));
    return undefined;
  }
  return { user, session, stillValid: async () => (await currentSession(ctx, request))?.id === session.id };
}

/** Never says whether a namespace the viewer cannot read exists. */
export function noSuchNamespace(reply: FastifyReply, v: Viewer, name: string): FastifyReply {
  return sendPage(
    reply,
    404,
    page({
      title: 'No such namespace',
      user: v.user.name,
      ...csrfOf(v),
      error: `There is no namespace ${name} that you can see.`,
      body: html`<p><a href="/">Home</a></p>`,
    }),
  );
}

/** Without users' cluster credentials the service can read nothing in a namespace. */
export function noClusterCredentials(reply: FastifyReply, v: Viewer): FastifyReply {
  const error = 'This devtool service hands out no Kubernetes credentials (its operator has not set DEVTOOL_KUBE_SERVER): it cannot show a namespace.';
  return sendPage(reply, 503, page({ title: 'Namespace pages unavailable', user: v.user.name, ...csrfOf(v), error, body: html`<p><a href="/">Home</a></p>` }));
}

/** Active or Terminating, or its sleep as the API says it (namespaces/view.ts). */
function statusText(n: NamespaceRecord): string {
  const sleep = namespaceBody(n, {}).sleep;
  if (n.status !== 'Active' || !sleep) return n.status;
  return `${sleep.state} since ${when(sleep.since)}${sleep.by ? ` (by ${sleep.by})` : ''}`;
}

export const csrfOf = (v: Viewer) => (v.session ? { csrf: v.session.csrf } : {});

/** Environments a pipeline of the service deploys: the preview's own, and those with a run record. */
async function pipelinesOf(ctx: ServiceDeps, ns: NamespaceRecord, names: readonly string[], known: Map<string, boolean>): Promise<Set<string>> {
  await Promise.all(
    names.filter((n) => !known.has(n)).map(async (n) => known.set(n, ns.preview?.pipeline === n || (await ctx.store.runs.getRecord(ns.name, n)) !== undefined)),
  );
  return new Set(names.filter((n) => known.get(n)));
}

export function registerDashboardPages(app: App, ctx: ServiceDeps, deps: DashboardDeps): void {
  app.get(LIVE_SCRIPT_PATH, async (_request, reply) =>
    reply
      .headers({
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      })
      .send(LIVE_SCRIPT),
  );

  const home = async (v: Viewer, reply: FastifyReply, status = 200, error?: string) => {
    const user = v.user;
    const [own, previews] = await Promise.all([ctx.store.listNamespaces(user.name), ctx.store.listPreviews()]);
    const running = async (n: NamespaceRecord): Promise<HomeNamespace['running']> => {
      if (!deps.cluster || n.status !== 'Active') return undefined;
      const [envs, pods] = await Promise.all([deps.cluster.list(user.name, n.name, 'environments'), deps.cluster.list(user.name, n.name, 'pods')]);
      if (envs === 'forbidden' || pods === 'forbidden') return undefined;
      return { environments: envs.length, ...podCounts(pods.map(podSummary)) };
    };
    const row = async (n: NamespaceRecord): Promise<HomeNamespace> => {
      const r = await running(n).catch(() => undefined);
      const last = lastActivityOf(n);
      return {
        name: n.name,
        status: statusText(n),
        owner: n.owner,
        personal: n.personal,
        deletable: mayDelete(user, n) && !n.preview && n.status === 'Active',
        ...(r ? { running: r } : {}),
        ...(last !== undefined ? { lastActivity: new Date(last).toISOString() } : {}),
      };
    };
    const global = previews.filter((p) => p.preview?.scope === 'global' && p.owner !== user.name);
    const [namespaces, shared] = await Promise.all([Promise.all(own.map(row)), Promise.all(global.map(row))]);
    return sendPage(reply, status, homePage({ user: user.name, ...csrfOf(v), namespaces, previews: shared, ...(error ? { error } : {}) }));
  };

  app.get('/', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    return v ? home(v, reply) : reply;
  });

  /** A form's POST: a browser session with a valid CSRF token, or nothing is done. */
  const formAction = async (request: FastifyRequest, reply: FastifyReply, act: (v: Viewer) => Promise<void>) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    if (!v.session || !csrfValid(ctx, request, v.session, formOf(request)['csrf'])) return refuseCsrf(reply);
    try {
      await act(v);
    } catch (err) {
      if (err instanceof ApiError) return home(v, reply, err.statusCode, `${err.message}.`);
      throw err;
    }
    return reply.redirect('/', 303);
  };
  app.post('/namespaces', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await createNamespaceFor(ctx, v.user, (formOf(request)['name'] ?? '').trim());
    }),
  );
  app.post('/namespaces/:name/delete', async (request, reply) =>
    formAction(request, reply, (v) => deleteNamespaceAs(ctx, v.user, (request.params as { name: string }).name)),
  );

  /** The namespace's objects as the viewer lists them; undefined when it may not read one of the kinds. */
  const snapshotFor = async (user: string, name: string): Promise<NamespaceSnapshot | undefined> => {
    const cluster = deps.cluster;
    if (!cluster) return undefined;
    const lists = await Promise.all(KINDS.map((k) => cluster.list(user, name, k)));
    if (lists.some((l) => l === 'forbidden')) return undefined;
    const items = Object.fromEntries(KINDS.map((k, i) => [k, (lists[i] as unknown[]).map((o) => SUMMARIZE[k](o))])) as unknown as { [K in Kind]: Summary<K>[] };
    return snapshotOf(items);
  };

  app.get('/namespaces/:name', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const name = (request.params as { name: string }).name;
    if (!deps.cluster) return noClusterCredentials(reply, v);
    const ns = await ctx.store.getNamespace(name);
    const snapshot = ns && (await snapshotFor(v.user.name, name));
    if (!ns || !snapshot) return noSuchNamespace(reply, v, name);
    const pipelines = await pipelinesOf(
      ctx,
      ns,
      snapshot.environments.map((e) => e.name),
      new Map(),
    );
    const data: NamespaceData = { user: v.user.name, ...csrfOf(v), name, owner: ns.owner, status: ns.status, snapshot, pipelines, now: ctx.now() };
    const runs = await ctx.store.runs.listRecords(name);
    return reply
      .code(200)
      .headers(LIVE_PAGE_HEADERS)
      .send(namespacePage({ ...data, runs, script: LIVE_SCRIPT_PATH }));
  });

  app.get('/namespaces/:name/events', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const name = (request.params as { name: string }).name;
    const ns = await ctx.store.getNamespace(name);
    const hub = deps.hub;
    if (!hub) return noClusterCredentials(reply, v);
    if (!ns) return noSuchNamespace(reply, v, name);
    const res = reply.raw;
    const dirty = new Set<SectionId>();
    const known = new Map<string, boolean>();
    let ended = false;
    let gathering: NodeJS.Timeout | undefined;
    let flushing = false;
    const timers: NodeJS.Timeout[] = [];
    let subscription: Subscription | undefined;
    let streaming = false;
    const finish = (reason?: string) => {
      if (ended) return;
      ended = true;
      if (!streaming) return; // ended while subscribing: the answer below says so
      for (const t of timers) clearInterval(t);
      clearTimeout(gathering);
      subscription?.close();
      if (reason && res.headersSent) res.write(`event: end\ndata: ${reason}\n\n`);
      res.end();
    };
    const flush = async () => {
      gathering = undefined;
      if (ended || flushing) return;
      const items = Object.fromEntries(KINDS.map((k) => [k, hub.items(name, k)]));
      if (Object.values(items).some((i) => i === undefined)) return; // a first list still to come: it will call again
      flushing = true;
      try {
        const snapshot = snapshotOf(items as { [K in Kind]: Summary<K>[] });
        const pipelines = await pipelinesOf(
          ctx,
          ns,
          snapshot.environments.map((e) => e.name),
          known,
        );
        const sections = namespaceSections({ user: v.user.name, name, owner: ns.owner, status: ns.status, snapshot, pipelines, now: ctx.now() });
        const ids = [...dirty];
        dirty.clear();
        for (const id of ids) res.write(`event: section\ndata: ${JSON.stringify({ id, html: sections[id].text })}\n\n`);
        if (res.writableLength > MAX_UNSENT) finish('this page fell behind the live updates: reload it');
      } finally {
        flushing = false;
      }
      if (dirty.size && !gathering) gathering = setTimeout(flush, GATHER_MS);
    };
    const subscriber: Subscriber = {
      changed(kind) {
        for (const id of SECTIONS_OF[kind]) dirty.add(id);
        if (!gathering && !ended) gathering = setTimeout(flush, GATHER_MS);
        return res.writableLength <= MAX_UNSENT;
      },
      end: (reason) => finish(reason),
    };
    subscription = await hub.subscribe(v.user.name, name, KINDS, subscriber).then((s) => (s === 'forbidden' ? undefined : s));
    if (!subscription || ended) {
      clearTimeout(gathering);
      subscription?.close();
      return subscription
        ? sendPage(reply, 503, page({ title: 'Try again', error: 'The live updates ended at once: reload the page.', body: html`` }))
        : noSuchNamespace(reply, v, name);
    }
    reply.hijack();
    streaming = true;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.write('retry: 3000\n\n');
    request.raw.on('close', () => finish());
    res.on('error', () => finish());
    timers.push(setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS));
    timers.push(setInterval(() => subscriber.changed('deployments'), SESSIONS_REFRESH_MS));
    timers.push(
      setInterval(() => {
        void v.stillValid().then((ok) => {
          if (!ok) finish('you are signed out: sign in again');
        });
      }, SESSION_RECHECK_MS),
    );
    return reply;
  });
}
