/**
 * The dashboard's logs of a workload (`/namespaces/<ns>/logs/<deployments|statefulsets>/<name>`):
 * the last lines of each container of its pods, read with the viewer's own token (pods/log), and
 * their live follow (`…/events`): the pods come from the watch hub (the viewer allowed in by its own
 * access reviews), each container's log from its own stream read with the viewer's token
 * (dashboard/log-follow.ts), a restarted container or a new pod picked up as the hub reports it.
 */
import type { FastifyReply } from 'fastify';
import type { DashboardCluster } from '../dashboard/kube-cluster.ts';
import type { Subscriber, WatchHub } from '../dashboard/hub.ts';
import { LIVE_SCRIPT_PATH } from '../dashboard/live-script.ts';
import { LogFollow } from '../dashboard/log-follow.ts';
import { type LogLine, logLinesHtml, timedLogLine } from '../dashboard/log-lines.ts';
import { LOG_KINDS, type LogKind, logsPage } from '../dashboard/logs-page.ts';
import { type PodSummary, podSummary, podsOf, SUMMARIZE, type WorkloadSummary } from '../dashboard/model.ts';
import { html, LIVE_PAGE_HEADERS, page } from '../pages/html.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { sendPage } from './login-pages.ts';
import { noClusterCredentials, noSuchNamespace, signedInOf, type Viewer, viewerOf } from './dashboard-viewer.ts';
import { openEventStream } from './dashboard-stream.ts';

/** Lines read back of each container's log. */
export const LOG_TAIL = 200;
/** Lines that may wait for the next update of a page; more and it is cut off. */
const MAX_PENDING_LINES = 5000;
const GATHER_MS = 50;

interface Params {
  name: string;
  kind: string;
  workload: string;
}

const isLogKind = (k: string): k is LogKind => Object.hasOwn(LOG_KINDS, k);

function noSuchWorkload(reply: FastifyReply, v: Viewer, p: Params): FastifyReply {
  const error = `There is no ${isLogKind(p.kind) ? LOG_KINDS[p.kind] : p.kind} ${p.workload} in namespace ${p.name}.`;
  return sendPage(
    reply,
    404,
    page({ title: 'No such workload', ...signedInOf(v), error, body: html`<p><a href="/namespaces/${p.name}">Namespace ${p.name}</a></p>` }),
  );
}

export function registerDashboardLogs(app: App, ctx: ServiceDeps, cluster: DashboardCluster | undefined, hub: WatchHub | undefined): void {
  app.get('/namespaces/:name/logs/:kind/:workload', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const p = request.params as Params;
    if (!cluster) return noClusterCredentials(reply, v);
    const ns = await ctx.store.getNamespace(p.name);
    if (!ns) return noSuchNamespace(reply, v, p.name);
    const user = v.user.name;
    const [pods, workloads] = await Promise.all([cluster.list(user, p.name, 'pods'), cluster.list(user, p.name, isLogKind(p.kind) ? p.kind : 'deployments')]);
    if (pods === 'forbidden' || workloads === 'forbidden') return noSuchNamespace(reply, v, p.name);
    if (!isLogKind(p.kind)) return noSuchWorkload(reply, v, p);
    const workload = workloads.map(SUMMARIZE[p.kind]).find((w) => w.name === p.workload);
    if (!workload) return noSuchWorkload(reply, v, p);
    const mine = podsOf(workload, pods.map(podSummary));
    const lines: LogLine[] = [];
    const stop = new AbortController();
    const reads = mine.flatMap((pod) =>
      pod.containers
        .filter((c) => c.instance)
        .map((c) =>
          cluster.podLog(
            user,
            p.name,
            { pod: pod.name, container: c.name, tail: LOG_TAIL, follow: false },
            (raw) => lines.push(timedLogLine(`${pod.name}/${c.name}`, raw)),
            stop.signal,
          ),
        ),
    );
    if ((await Promise.all(reads)).includes('forbidden')) return noSuchNamespace(reply, v, p.name);
    const body = logsPage({
      ...signedInOf(v),
      namespace: p.name,
      kind: p.kind,
      name: p.workload,
      pods: mine.map((x) => x.name),
      tail: LOG_TAIL,
      lines,
      script: LIVE_SCRIPT_PATH,
    });
    return reply.code(200).headers(LIVE_PAGE_HEADERS).send(body);
  });

  app.get('/namespaces/:name/logs/:kind/:workload/events', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const p = request.params as Params;
    if (!cluster || !hub) return noClusterCredentials(reply, v);
    if (!(await ctx.store.getNamespace(p.name))) return noSuchNamespace(reply, v, p.name);
    if (!isLogKind(p.kind)) return noSuchWorkload(reply, v, p);
    const kind = p.kind;
    const user = v.user.name;
    let first = true;
    let stream: ReturnType<typeof openEventStream> | undefined;
    let subscription: { close(): void } | undefined;
    const follow = new LogFollow(
      (at, line, signal) => cluster.podLog(user, p.name, at, line, signal),
      {
        lines(batch) {
          if (!stream || stream.ended) return true;
          // The first lines replace the first paint's (the same tails, read again): nothing twice, nothing missed.
          stream.send(first ? 'section' : 'append', { id: 'log', html: logLinesHtml(batch).text });
          first = false;
          return !stream.behind();
        },
        end: (reason) => stream?.end(reason),
      },
      { tail: LOG_TAIL, maxPending: MAX_PENDING_LINES, gatherMs: GATHER_MS },
    );
    const podsNow = (): PodSummary[] => {
      const workload = (hub.items(p.name, kind) as WorkloadSummary[] | undefined)?.find((w) => w.name === p.workload);
      return workload ? podsOf(workload, hub.items(p.name, 'pods') ?? []) : [];
    };
    const subscriber: Subscriber = {
      changed() {
        if (stream) follow.update(podsNow());
        return !stream?.behind();
      },
      end: (reason) => (stream ? stream.end(reason) : follow.close()),
    };
    const joined = await hub.subscribe(user, p.name, ['pods', kind], subscriber);
    if (joined === 'forbidden') {
      follow.close();
      return noSuchNamespace(reply, v, p.name);
    }
    subscription = joined;
    stream = openEventStream(request, reply, v, () => {
      follow.close();
      subscription?.close();
    });
    follow.update(podsNow());
    return reply;
  });
}
