/**
 * The dashboard's pages (server/dashboard/): Home (`/`), a namespace (`/namespaces/<name>`), its
 * live updates (`/namespaces/<name>/events`, server-sent events fed by the watch hub), the create
 * and delete forms, and the live-update script. A page is for the signed-in browser session, or,
 * for scripts and tests, for the user of an `Authorization: Bearer` API token (read only: no forms).
 * Everything a page shows of a namespace is read with the viewer's own Kubernetes token, or, live,
 * from a shared watch the viewer was allowed into by its own access reviews (dashboard/hub.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { csrfValid } from '../browser-sessions.ts';
import type { DashboardCluster } from '../dashboard/kube-cluster.ts';
import { homePage, type HomeNamespace } from '../dashboard/home-page.ts';
import type { WatchHub } from '../dashboard/hub.ts';
import { LIVE_SCRIPT, LIVE_SCRIPT_PATH } from '../dashboard/live-script.ts';
import { KINDS, type Kind, podCounts, podSummary, SUMMARIZE, type Summary, snapshotOf, type NamespaceSnapshot } from '../dashboard/model.ts';
import { type NamespaceData, namespacePage } from '../dashboard/namespace-page.ts';
import { when } from '../dashboard/model.ts';
import { lastActivityOf } from '../namespaces/idle.ts';
import { namespaceBody } from '../namespaces/view.ts';
import type { NamespaceBody } from '../../api/routes.ts';
import type { SleepView } from '../dashboard/sleep-view.ts';
import { ApiError } from '../errors.ts';
import { createNamespaceFor, deleteNamespaceAs, mayChangeSleep, mayDelete, sleepNamespaceAs, wakeNamespaceAs } from '../namespaces/actions.ts';
import type { NamespaceDeps } from '../namespaces/sleep.ts';
import type { PreviewView } from '../dashboard/preview-view.ts';
import { destroyPreview, mayDestroyPreview, mayRedeployPreview, type PreviewDeps, redeployPreview } from '../previews/previews.ts';
import { maySleepPreview, sleepPreview, wakePreview } from '../previews/sleep.ts';
import { LIVE_PAGE_HEADERS } from '../pages/html.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord, UserRecord } from '../store/store.ts';
import { registerAdminPages } from './admin-pages.ts';
import { registerDashboardEvents } from './dashboard-events.ts';
import { csrfOf, noClusterCredentials, noSuchNamespace, pipelinesOf, type Viewer, viewerOf } from './dashboard-viewer.ts';
import { formOf, refuseCsrf, safeNext, sendPage } from './login-pages.ts';

export interface DashboardDeps {
  /** Absent when the service hands out no Kubernetes credentials: pages show names and owners only. */
  cluster?: DashboardCluster;
  hub?: WatchHub;
  /** What sleep and wake act with (as the namespace's owner); absent without cluster credentials. */
  namespaces?: NamespaceDeps;
  /** What the preview forms act with (the preview routes' own). */
  previews?: PreviewDeps;
}

/** A preview's deploy and destroy runs get as long as `devtool preview deploy` and `destroy` give them by default (5m). */
const PREVIEW_RUN_SECONDS = 300;

/** Active or Terminating, or its sleep as the API says it (namespaces/view.ts). */
function statusText(n: NamespaceRecord): string {
  const sleep = namespaceBody(n, {}).sleep;
  if (n.status !== 'Active' || !sleep) return n.status;
  return `${sleep.state} since ${when(sleep.since)}${sleep.by ? ` (by ${sleep.by})` : ''}`;
}

/** A namespace's sleep for Home and its page: whether the viewer may put it to sleep or wake it, and the service's announcement. */
function sleepOf(user: UserRecord, n: NamespaceRecord, body: NamespaceBody): SleepView {
  return {
    ...(body.sleep ? { sleep: body.sleep.state } : {}),
    sleepable: mayChangeSleep(user, n) && !n.preview && n.status === 'Active',
    ...(body.sleepsAt ? { sleepsAt: body.sleepsAt } : {}),
    ...(body.deletesAt ? { deletesAt: body.deletesAt } : {}),
  };
}

/** A preview's scope, source and the buttons its rules allow `user`; undefined for a plain namespace. */
function previewOf(user: UserRecord, n: NamespaceRecord): PreviewView | undefined {
  const p = n.preview;
  if (!p) return undefined;
  return {
    scope: p.scope,
    ...(p.sourceUrl ? { sourceUrl: p.sourceUrl } : {}),
    sleeping: p.sleepingSince !== undefined,
    destroying: p.destroyRequestedAt !== undefined || n.status === 'Terminating',
    maySleep: maySleepPreview(user, n),
    mayRedeploy: mayRedeployPreview(user, n),
    mayDestroy: mayDestroyPreview(user, n),
  };
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
      const body = namespaceBody(n, ctx.config.namespaceIdle ?? {});
      return {
        name: n.name,
        status: statusText(n),
        owner: n.owner,
        personal: n.personal,
        deletable: mayDelete(user, n) && !n.preview && n.status === 'Active',
        ...sleepOf(user, n, body),
        ...(n.preview ? { preview: previewOf(user, n)! } : {}),
        ...(r ? { running: r } : {}),
        ...(last !== undefined ? { lastActivity: new Date(last).toISOString() } : {}),
      };
    };
    const global = previews.filter((p) => p.preview?.scope === 'global' && p.owner !== user.name);
    const [namespaces, shared] = await Promise.all([Promise.all(own.map(row)), Promise.all(global.map(row))]);
    return sendPage(reply, status, homePage({ user: user.name, admin: user.admin, ...csrfOf(v), namespaces, previews: shared, ...(error ? { error } : {}) }));
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
    // Back where the form was (Home or the namespace's page): a path on this service only.
    const back = formOf(request)['back'];
    return reply.redirect(back !== undefined && safeNext(back) === back ? back : '/', 303);
  };
  app.post('/namespaces', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await createNamespaceFor(ctx, v.user, (formOf(request)['name'] ?? '').trim());
    }),
  );
  app.post('/namespaces/:name/delete', async (request, reply) =>
    formAction(request, reply, (v) => deleteNamespaceAs(ctx, v.user, (request.params as { name: string }).name)),
  );
  const sleepDeps = (): NamespaceDeps => {
    if (!deps.namespaces) throw new ApiError(503, 'this devtool service cannot act as its users: its operator has not set DEVTOOL_KUBE_SERVER');
    return deps.namespaces;
  };
  app.post('/namespaces/:name/sleep', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await sleepNamespaceAs(ctx, sleepDeps(), v.user, (request.params as { name: string }).name);
    }),
  );
  app.post('/namespaces/:name/wake', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await wakeNamespaceAs(ctx, sleepDeps(), v.user, (request.params as { name: string }).name);
    }),
  );
  const previewDeps = (): PreviewDeps => {
    if (!deps.previews) throw new ApiError(503, 'this devtool service has no preview environments');
    return deps.previews;
  };
  const previewName = (request: FastifyRequest) => (request.params as { name: string }).name;
  app.post('/previews/:name/redeploy', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await redeployPreview(previewDeps(), v.user, previewName(request), PREVIEW_RUN_SECONDS);
    }),
  );
  app.post('/previews/:name/sleep', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await sleepPreview(previewDeps(), v.user, previewName(request));
    }),
  );
  app.post('/previews/:name/wake', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await wakePreview(previewDeps(), v.user, previewName(request));
    }),
  );
  app.post('/previews/:name/destroy', async (request, reply) =>
    formAction(request, reply, async (v) => {
      await destroyPreview(previewDeps(), v.user, previewName(request), PREVIEW_RUN_SECONDS);
    }),
  );
  registerAdminPages(app, ctx, {
    viewerOf: (request, reply) => viewerOf(ctx, request, reply),
    statusText,
    ...(deps.namespaces ? { namespaces: deps.namespaces } : {}),
  });

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
    const body = namespaceBody(ns, ctx.config.namespaceIdle ?? {});
    const data: NamespaceData = {
      user: v.user.name,
      admin: v.user.admin,
      ...csrfOf(v),
      name,
      owner: ns.owner,
      status: statusText(ns),
      ...sleepOf(v.user, ns, body),
      ...(ns.preview ? { preview: previewOf(v.user, ns)! } : {}),
      snapshot,
      pipelines,
      now: ctx.now(),
    };
    const runs = await ctx.store.runs.listRecords(name);
    return reply
      .code(200)
      .headers(LIVE_PAGE_HEADERS)
      .send(namespacePage({ ...data, runs, script: LIVE_SCRIPT_PATH }));
  });

  registerDashboardEvents(app, ctx, deps);
}
