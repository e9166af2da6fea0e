/**
 * The dashboard's pipeline run page (`/namespaces/<ns>/pipelines/<name>`): the run's record and its
 * log, read as the viewer (the same access check and record refresh as `GET /api/v1/pipelines/…`),
 * and, while the run runs, its stream (`…/events`): the runner's output line by line through the
 * same follow as the API's log route (PipelineCluster.followLog, acting with the viewer's own
 * token), then the run's status once its end is recorded.
 */
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import type { FastifyReply } from 'fastify';
import { PIPELINE_LOG_MAX } from '../../api/routes.ts';
import { LIVE_SCRIPT_PATH } from '../dashboard/live-script.ts';
import { LineBatches } from '../dashboard/log-follow.ts';
import { logLinesHtml } from '../dashboard/log-lines.ts';
import { isRunning, runFacts, runPage } from '../dashboard/pipeline-page.ts';
import { ApiError } from '../errors.ts';
import { html, LIVE_PAGE_HEADERS, page } from '../pages/html.ts';
import type { ActingUser } from '../pipelines/acting-user.ts';
import type { PipelineCluster } from '../pipelines/cluster.ts';
import { refresh, requireAccess } from '../pipelines/runs.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { sendPage } from './login-pages.ts';
import { noSuchNamespace, signedInOf, type Viewer, viewerOf } from './dashboard-viewer.ts';
import { openEventStream } from './dashboard-stream.ts';

const MAX_PENDING_LINES = 5000;
const GATHER_MS = 50;
/** How often an ended runner's record is read again until its end is recorded. */
const END_POLL_MS = 1000;
const END_POLL_TIMES = 90;
const RIGHTS_RECHECK_MS = 60_000;

export type RunsAs = (user: string) => Promise<ActingUser<PipelineCluster>>;

interface Params {
  name: string;
  pipeline: string;
}

export function registerDashboardRuns(app: App, ctx: ServiceDeps, runsAs: RunsAs): void {
  /**
   * The viewer's cluster and the run's record brought up to date; a reply already sent when the
   * viewer may not read pipelines there (the namespace's 404 line) or there is no such run.
   */
  const runFor = async (v: Viewer, p: Params, reply: FastifyReply) => {
    if (!(await ctx.store.getNamespace(p.name))) return noSuchNamespace(reply, v, p.name);
    try {
      const { cluster } = await runsAs(v.user.name);
      await requireAccess(cluster, p.name, p.pipeline, 'read');
      const found = await refresh(cluster, p.name, p.pipeline, ctx.now());
      if (!found) {
        const error = `There is no pipeline ${p.pipeline} in namespace ${p.name}.`;
        return sendPage(
          reply,
          404,
          page({
            title: 'No such pipeline',
            ...signedInOf(v),
            error,
            body: html`<p><a href="/namespaces/${p.name}">Namespace ${p.name}</a></p>`,
          }),
        );
      }
      return { cluster, record: found.record };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.statusCode === 403 || err.statusCode === 404) return noSuchNamespace(reply, v, p.name);
      return sendPage(
        reply,
        err.statusCode,
        page({ title: 'Pipeline unavailable', ...signedInOf(v), error: err.message, body: html`<p><a href="/">Home</a></p>` }),
      );
    }
  };

  app.get('/namespaces/:name/pipelines/:pipeline', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const p = request.params as Params;
    const run = await runFor(v, p, reply);
    if (!('record' in run)) return reply;
    const { cluster, record } = run;
    const output = isRunning(record) ? ((await cluster.logOf(p.name, record.job, 1, PIPELINE_LOG_MAX))?.tail ?? '') : (record.log ?? '');
    const body = runPage({ ...signedInOf(v), namespace: p.name, record, output, now: ctx.now(), script: LIVE_SCRIPT_PATH });
    return reply.code(200).headers(LIVE_PAGE_HEADERS).send(body);
  });

  app.get('/namespaces/:name/pipelines/:pipeline/events', async (request, reply) => {
    const v = await viewerOf(ctx, request, reply);
    if (!v) return reply;
    const p = request.params as Params;
    const run = await runFor(v, p, reply);
    if (!('record' in run)) return reply;
    const { cluster, record } = run;
    const abort = new AbortController();
    let first = true;
    // The viewer's rights are asked again while the run is followed, as the hub does for the other pages.
    const recheck = setInterval(() => {
      void runsAs(v.user.name)
        .then(({ cluster: now }) => requireAccess(now, p.name, p.pipeline, 'read'))
        .catch((err: unknown) => {
          if (err instanceof ApiError && err.statusCode === 403) stream.end('your rights in this namespace changed');
        });
    }, RIGHTS_RECHECK_MS);
    recheck.unref();
    const stream = openEventStream(request, reply, v, () => {
      clearInterval(recheck);
      abort.abort();
    });
    const batches = new LineBatches(
      {
        lines(batch) {
          // The first lines replace the first paint's: the follow reads the output from its start.
          stream.send(first ? 'section' : 'append', { id: 'log', html: logLinesHtml(batch).text });
          first = false;
          return !stream.behind();
        },
        end: (reason) => stream.end(reason),
      },
      { maxPending: MAX_PENDING_LINES, gatherMs: GATHER_MS },
      () => abort.abort(),
    );
    const ended = async () => {
      batches.flush();
      // The runner ended: its end is recorded by the next refresh that sees the Job done.
      for (let i = 0; i < END_POLL_TIMES && !abort.signal.aborted; i++) {
        const found = await refresh(cluster, p.name, p.pipeline, ctx.now()).catch(() => undefined);
        if (found && !isRunning(found.record)) {
          stream.send('section', { id: 'run', html: runFacts(found.record, ctx.now()).text });
          return stream.end(`the run ended: ${found.record.status}`);
        }
        await new Promise((r) => setTimeout(r, END_POLL_MS));
      }
      stream.end('the run has not recorded its end yet: reload the page later');
    };
    if (!isRunning(record)) {
      stream.send('section', { id: 'run', html: runFacts(record, ctx.now()).text });
      stream.end(`the run ended: ${record.status}`);
      return reply;
    }
    const out = new PassThrough();
    const lines = createInterface({ input: out, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (text) => batches.push({ source: '', at: Number.NaN, text }));
    lines.on('close', () => void ended());
    cluster.followLog(p.name, record.job, out, abort.signal).then(
      (followed) => {
        if (!followed) out.end();
      },
      (err: unknown) => {
        request.log.warn({ err }, 'following a pipeline log failed');
        out.end();
      },
    );
    return reply;
  });
}
