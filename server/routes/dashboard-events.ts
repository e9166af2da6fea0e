/**
 * A namespace page's live updates (`/namespaces/<name>/events`): server-sent events, one per
 * changed section, rendered as the first paint is. The stream subscribes to the watch hub
 * (dashboard/hub.ts) for the viewer, gathers changes for GATHER_MS, ends when the viewer signs out
 * or loses its rights, and drops a page that holds more than MAX_UNSENT bytes unsent.
 */
import type { Subscriber, Subscription } from '../dashboard/hub.ts';
import { KINDS, type Kind, type Summary, snapshotOf } from '../dashboard/model.ts';
import { namespaceSections, type SectionId } from '../dashboard/namespace-page.ts';
import { html, page } from '../pages/html.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import type { DashboardDeps } from './dashboard-pages.ts';
import { noClusterCredentials, noSuchNamespace, pipelinesOf, viewerOf } from './dashboard-viewer.ts';
import { sendPage } from './login-pages.ts';

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

export function registerDashboardEvents(app: App, ctx: ServiceDeps, deps: DashboardDeps): void {
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
