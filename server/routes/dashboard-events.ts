/**
 * A namespace page's live updates (`/namespaces/<name>/events`): server-sent events, one per
 * changed section, rendered as the first paint is. The stream subscribes to the watch hub
 * (dashboard/hub.ts) for the viewer and to the namespace hub for the namespace's own status,
 * gathers changes for GATHER_MS, ends when the viewer signs out or loses its rights, when the
 * namespace goes, or when its watches stop (the owner's account gone), and drops a page that holds
 * more than MAX_UNSENT bytes unsent.
 *
 * The pipeline runs are the service's records: read again when the namespace's pods change (a
 * run's runner is a pod: it starts, ends, goes) and every SESSIONS_REFRESH_MS, at most every
 * RUNS_MIN_MS; a run still recorded as running is brought up to date as the viewer's reading it
 * through the API would (pipelines/runs.ts `refresh`).
 */
import { FELL_BEHIND, type Subscriber, type Subscription } from '../dashboard/hub.ts';
import { KINDS, type Kind, type Summary, snapshotOf } from '../dashboard/model.ts';
import { namespaceSections, type SectionId } from '../dashboard/namespace-page.ts';
import { isRunning } from '../dashboard/pipeline-page.ts';
import { refresh } from '../pipelines/runs.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord, RunRecord } from '../store/store.ts';
import { namespaceHead } from './dashboard-data.ts';
import type { DashboardDeps } from './dashboard-pages.ts';
import { csrfOf, noClusterCredentials, noSuchNamespace, pipelinesOf, viewerOf } from './dashboard-viewer.ts';

/** Bytes a live stream may hold unsent before its page is dropped as too slow. */
export const MAX_UNSENT = 256 * 1024;
/** How long changes are gathered into one update. */
const GATHER_MS = 30;
export const HEARTBEAT_MS = 25_000;
export const SESSION_RECHECK_MS = 60_000;
/** The pipeline runs are read again at most this often, however often the pods change. */
const RUNS_MIN_MS = 1000;

const SECTIONS_OF: Record<Kind, SectionId[]> = {
  pods: ['workloads', 'pipelines'],
  deployments: ['workloads', 'sessions'],
  statefulsets: ['workloads'],
  environments: ['environments'],
  ingresses: ['environments'],
};
/** How often the dev containers and pipeline runs are shown again unchanged: a session whose heartbeats stopped shows as gone, a run's duration grows. */
const SESSIONS_REFRESH_MS = 30_000;

export function registerDashboardEvents(app: App, ctx: ServiceDeps, deps: DashboardDeps): void {
  app.get('/namespaces/:name/events', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const name = (request.params as { name: string }).name;
    let ns: NamespaceRecord | undefined = await ctx.store.getNamespace(name);
    const hub = deps.hub;
    if (!hub) return noClusterCredentials(reply, v);
    if (!ns) return noSuchNamespace(reply, v, name);
    const res = reply.raw;
    const dirty = new Set<SectionId>();
    const known = new Map<string, boolean>();
    let ended = false;
    let endReason: string | undefined;
    let gathering: NodeJS.Timeout | undefined;
    let flushing = false;
    const timers: NodeJS.Timeout[] = [];
    let subscription: Subscription | undefined;
    let statusWatch: { close(): void } | undefined;
    let streaming = false;
    let runs: RunRecord[] | undefined;
    let runsReadAt = 0;
    let watched = false;
    let runsLater: NodeJS.Timeout | undefined;
    const later = (ms = GATHER_MS) => {
      if (!gathering && !ended) gathering = setTimeout(flush, ms);
    };
    const finish = (reason?: string) => {
      if (ended) return;
      ended = true;
      endReason = reason;
      if (!streaming) return; // ended while subscribing: the answer below says so
      for (const t of timers) clearInterval(t);
      clearTimeout(gathering);
      clearTimeout(runsLater);
      subscription?.close();
      statusWatch?.close();
      if (reason && res.headersSent) res.write(`event: end\ndata: ${reason}\n\n`);
      res.end();
    };
    /** The runs as recorded, a running one brought up to date as the viewer reading it would. */
    const readRuns = async (): Promise<RunRecord[]> => {
      const recorded = await ctx.store.runs.listRecords(name);
      const running = recorded.filter(isRunning);
      // Without users' cluster credentials (runsAs answers 503) the records are shown as recorded.
      const cluster = running.length
        ? await deps.runsAs?.(v.user.name).then(
            (a) => a.cluster,
            () => undefined,
          )
        : undefined;
      if (!cluster) return recorded;
      const now = ctx.now();
      const fresh = await Promise.all(running.map((r) => refresh(cluster, name, r.name, now).catch(() => undefined)));
      const byName = new Map(fresh.flatMap((f) => (f ? [[f.record.name, f.record] as const] : [])));
      return recorded.map((r) => byName.get(r.name) ?? r);
    };
    const flush = async () => {
      gathering = undefined;
      if (ended || flushing) return;
      const items = Object.fromEntries(KINDS.map((k) => [k, hub.items(name, k)]));
      if (Object.values(items).some((i) => i === undefined)) return; // a first list still to come: it will call again
      const record = deps.namespaceHub?.get(name);
      // Gone only once the watch has shown it: a namespace made a moment ago may not be in its list yet.
      if (record === null && watched) return finish(`namespace ${name} was deleted`);
      if (record) {
        ns = record;
        watched = true;
      }
      // The runs at most every RUNS_MIN_MS: a busy namespace's pods change many times a second.
      const wait = runsReadAt + RUNS_MIN_MS - Date.now();
      if (dirty.has('pipelines') && runs !== undefined && wait > 0) {
        dirty.delete('pipelines');
        runsLater ??= setTimeout(() => {
          runsLater = undefined;
          dirty.add('pipelines');
          later();
        }, wait);
      }
      flushing = true;
      try {
        if (dirty.has('pipelines')) {
          runsReadAt = Date.now();
          runs = await readRuns().catch(() => runs ?? []);
        }
        const snapshot = snapshotOf(items as { [K in Kind]: Summary<K>[] });
        const pipelines = await pipelinesOf(
          ctx,
          ns!,
          snapshot.environments.map((e) => e.name),
          known,
        );
        const data = { user: v.user.name, ...csrfOf(v), name, ...namespaceHead(ctx, v.user, ns!), snapshot, pipelines, runs: runs ?? [], now: ctx.now() };
        const sections = namespaceSections(data);
        const ids = [...dirty];
        dirty.clear();
        if (ended) return;
        for (const id of ids) res.write(`event: section\ndata: ${JSON.stringify({ id, html: sections[id].text })}\n\n`);
        if (res.writableLength > MAX_UNSENT) finish(FELL_BEHIND);
      } finally {
        flushing = false;
      }
      if (dirty.size) later();
    };
    const subscriber: Subscriber = {
      changed(kind) {
        for (const id of SECTIONS_OF[kind]) dirty.add(id);
        later();
        return res.writableLength <= MAX_UNSENT;
      },
      end: (reason) => finish(reason),
    };
    dirty.add('pipelines');
    subscription = await hub.subscribe(v.user.name, name, KINDS, subscriber).then((s) => (s === 'forbidden' ? undefined : s));
    if (!subscription) return noSuchNamespace(reply, v, name);
    reply.hijack();
    streaming = true;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.write('retry: 3000\n\n');
    if (ended) {
      // The hub ended it while it joined (its watches stopped for good: the owner's account gone): the page says why.
      ended = false;
      finish(endReason ?? 'the live updates ended at once: reload the page');
      return reply;
    }
    statusWatch = deps.namespaceHub?.subscribe({
      changed(names) {
        if (names !== 'all' && !names.includes(name)) return true;
        dirty.add('ns-state');
        dirty.add('ns-actions');
        later();
        return res.writableLength <= MAX_UNSENT;
      },
      end: (reason) => finish(reason),
    });
    request.raw.on('close', () => finish());
    res.on('error', () => finish());
    timers.push(setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS));
    timers.push(
      setInterval(() => {
        dirty.add('pipelines');
        subscriber.changed('deployments');
      }, SESSIONS_REFRESH_MS),
    );
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
