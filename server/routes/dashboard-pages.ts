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
import { ownerGone, stoppedLine, type WatchHub } from '../dashboard/hub.ts';
import { LIVE_SCRIPT, LIVE_SCRIPT_PATH } from '../dashboard/live-script.ts';
import { KINDS, type Kind, podCounts, podSummary, SUMMARIZE, type Summary, snapshotOf, type NamespaceSnapshot } from '../dashboard/model.ts';
import { homeVisible, type NamespaceHub } from '../dashboard/namespace-hub.ts';
import { type NamespaceData, namespacePage } from '../dashboard/namespace-page.ts';
import { ApiError } from '../errors.ts';
import { createNamespaceFor, deleteNamespaceAs, sleepNamespaceAs, wakeNamespaceAs } from '../namespaces/actions.ts';
import type { NamespaceDeps } from '../namespaces/sleep.ts';
import { destroyPreview, type PreviewDeps, redeployPreview } from '../previews/previews.ts';
import { sleepPreview, wakePreview } from '../previews/sleep.ts';
import { LIVE_PAGE_HEADERS } from '../pages/html.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord } from '../store/store.ts';
import { registerAdminPages } from './admin-pages.ts';
import { homeRow, namespaceHead, statusText } from './dashboard-data.ts';
import { registerDashboardEvents } from './dashboard-events.ts';
import { registerHomeEvents } from './dashboard-home-events.ts';
import type { RunsAs } from './dashboard-runs.ts';
import { csrfOf, noClusterCredentials, noSuchNamespace, pipelinesOf, type Viewer, viewerOf } from './dashboard-viewer.ts';
import { formOf, refuseCsrf, safeNext, sendPage } from './login-pages.ts';

export interface DashboardDeps {
  /** Absent when the service hands out no Kubernetes credentials: pages show names and owners only. */
  cluster?: DashboardCluster;
  hub?: WatchHub;
  /** The namespaces devtool manages, watched (Home's lists and a namespace's status, live); absent: the store cannot watch. */
  namespaceHub?: NamespaceHub;
  /** A user's pipeline cluster: an open namespace page records a run's end as that user would by reading it. */
  runsAs?: RunsAs;
  /** What sleep and wake act with (as the namespace's owner); absent without cluster credentials. */
  namespaces?: NamespaceDeps;
  /** What the preview forms act with (the preview routes' own). */
  previews?: PreviewDeps;
}

/** A preview's deploy and destroy runs get as long as `devtool preview deploy` and `destroy` give them by default (5m). */
const PREVIEW_RUN_SECONDS = 300;

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
    const row = async (n: NamespaceRecord) => homeRow(ctx, user, n, await running(n).catch(() => undefined));
    // The user's own previews are in both lists.
    const visible = homeVisible(user.name, new Map([...own, ...previews].map((n) => [n.name, n])).values());
    const [namespaces, shared] = await Promise.all([Promise.all(visible.own.map(row)), Promise.all(visible.previews.map(row))]);
    const live = deps.namespaceHub ? { script: LIVE_SCRIPT_PATH } : {};
    const body = homePage({ user: user.name, admin: user.admin, ...csrfOf(v), namespaces, previews: shared, ...live, ...(error ? { error } : {}) });
    return deps.namespaceHub ? reply.code(status).headers(LIVE_PAGE_HEADERS).send(body) : sendPage(reply, status, body);
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
    const runs = await ctx.store.runs.listRecords(name);
    const data: NamespaceData = {
      user: v.user.name,
      admin: v.user.admin,
      ...csrfOf(v),
      name,
      ...namespaceHead(ctx, v.user, ns),
      snapshot,
      pipelines,
      runs,
      now: ctx.now(),
    };
    // The shared watches act as the owner: without its account there is nothing to watch as.
    const stopped = (await ctx.store.getUser(ns.owner)) ? undefined : stoppedLine(ownerGone(ns.owner));
    return reply
      .code(200)
      .headers(LIVE_PAGE_HEADERS)
      .send(namespacePage({ ...data, script: LIVE_SCRIPT_PATH, ...(stopped ? { notLive: stopped } : {}) }));
  });

  registerDashboardEvents(app, ctx, deps);
  registerHomeEvents(app, ctx, deps);
}
