import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerRun } from './pods.ts';
import { PodLogs, type LogQuery, type LogsRequest, type PodLogApi } from './stream.ts';

function pod(name: string, service: string, runIds: string[] = [`${name}-r1`], containers = ['main']): V1Pod {
  return {
    metadata: { name, labels: { 'devtool.dev/service': service } },
    spec: { containers: containers.map((c) => ({ name: c })) },
    status: {
      phase: runIds.length ? 'Running' : 'Pending',
      containerStatuses: runIds.map((id, i) => ({ name: containers[i]!, containerID: id, state: { running: {} } })) as never,
    },
  };
}

/** An in-memory namespace: pods listed, one watch at a time the test drives, logs the test writes and ends. */
function fakeCluster(initial: V1Pod[]) {
  let pods = initial;
  let version = 1;
  const opened: { run: ContainerRun; query: LogQuery; data(text: string): void; end(err?: Error): void; stopped: boolean }[] = [];
  const watches: { from: string | undefined; event(type: string, pod: V1Pod): void; done(err: unknown): void; stopped: boolean }[] = [];
  const lists: (string | undefined)[] = [];
  const api: PodLogApi = {
    pods: async (labelSelector) => {
      lists.push(labelSelector);
      return { items: pods, resourceVersion: String(version) };
    },
    watchPods: async (_selector, from, event, done) => {
      const w = { from, event, done, stopped: false };
      watches.push(w);
      return () => {
        w.stopped = true;
        done(new Error('aborted'));
      };
    },
    log: (run, query, data) => {
      let settle!: (err?: Error) => void;
      const done = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
      const entry = { run, query, data: (text: string) => data(Buffer.from(text)), end: settle, stopped: false };
      opened.push(entry);
      return {
        done,
        stop: () => {
          entry.stopped = true;
          settle();
        },
      };
    },
  };
  return {
    api,
    opened,
    watches,
    lists,
    set: (next: V1Pod[]) => {
      pods = next;
      version++;
    },
  };
}

function output() {
  const lines: string[] = [];
  const notices: string[] = [];
  return {
    lines,
    notices,
    out: { line: (run: ContainerRun, text: string) => lines.push(`${run.pod}/${run.container}: ${text}`), notice: (t: string) => notices.push(t) },
  };
}

const request = (o: Partial<LogsRequest> = {}): LogsRequest => ({
  labelSelector: 'devtool.dev/environment=shop',
  accept: () => true,
  what: 'environment shop in namespace dev',
  follow: false,
  timestamps: false,
  ...o,
});

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('once: every started container, --tail and --since each, lines interleaved as they come; waiting containers said', async () => {
  const cluster = fakeCluster([pod('web-1', 'web'), pod('api-1', 'api', ['api-1-r1', 'api-1-s1'], ['main', 'proxy']), pod('web-2', 'web', [])]);
  const o = output();
  const run = new PodLogs(cluster.api, request({ tailLines: 5, sinceSeconds: 60, timestamps: true }), o.out).run();
  await tick();
  assert.deepEqual(
    cluster.opened.map((s) => `${s.run.pod}/${s.run.container}`),
    ['api-1/main', 'api-1/proxy', 'web-1/main'],
    'in the order of service, then pod',
  );
  for (const s of cluster.opened) assert.deepEqual(s.query, { follow: false, timestamps: true, tailLines: 5, sinceSeconds: 60 });
  const [api, proxy, web] = cluster.opened;
  web!.data('w1\nw');
  api!.data('a1\n');
  web!.data('2\n');
  proxy!.data('p1');
  proxy!.end();
  api!.end();
  web!.end();
  assert.deepEqual(await run, { failed: 0 });
  assert.deepEqual(o.lines, ['web-1/main: w1', 'api-1/main: a1', 'web-1/main: w2', 'api-1/proxy: p1']);
  assert.deepEqual(o.notices, ['[web/web-2] has no log yet: Pending']);
  assert.deepEqual(cluster.watches, [], 'no watch without --follow');
});

test('once: only the pods accepted; none at all is said', async () => {
  const cluster = fakeCluster([pod('web-1', 'web'), pod('api-1', 'api')]);
  const o = output();
  const run = new PodLogs(cluster.api, request({ accept: (p) => p.metadata!.name === 'api-1' }), o.out).run();
  await tick();
  assert.deepEqual(
    cluster.opened.map((s) => s.run.pod),
    ['api-1'],
  );
  cluster.opened[0]!.end();
  await run;
  const none = output();
  assert.deepEqual(await new PodLogs(fakeCluster([]).api, request(), none.out).run(), { failed: 0 });
  assert.deepEqual(none.notices, ['no pods of environment shop in namespace dev']);
});

test('a log that fails is said and counted, the others go on', async () => {
  const cluster = fakeCluster([pod('web-1', 'web'), pod('web-2', 'web')]);
  const o = output();
  const run = new PodLogs(cluster.api, request(), o.out).run();
  await tick();
  cluster.opened[0]!.data('half a line');
  cluster.opened[0]!.end(new Error('400 container "main" in pod "web-1" is terminated'));
  await tick();
  cluster.opened[1]!.data('ok\n');
  cluster.opened[1]!.end();
  assert.deepEqual(await run, { failed: 1 });
  assert.deepEqual(o.lines, ['web-1/main: half a line', 'web-2/main: ok']);
  assert.deepEqual(o.notices, ['[web/web-1] the log could not be read: 400 container "main" in pod "web-1" is terminated']);
});

test('follow: the pods that come later through the watch, from their first line, each container run once; stop ends everything', async () => {
  const cluster = fakeCluster([pod('web-1', 'web')]);
  const o = output();
  const controller = new AbortController();
  const run = new PodLogs(cluster.api, request({ follow: true, tailLines: 10 }), o.out).run(controller.signal);
  await tick();
  assert.deepEqual(cluster.opened[0]!.query, { follow: true, timestamps: true, tailLines: 10 });
  assert.equal(cluster.watches.length, 1);
  const watch = cluster.watches[0]!;
  assert.equal(watch.from, '1', 'the watch starts where the list ended');
  // The same run again (a status change): not opened twice.
  watch.event('MODIFIED', pod('web-1', 'web'));
  // The pod deleted: its container ends, its log with it (not opened again); the replacement is pending, then runs.
  const deleting = pod('web-1', 'web');
  deleting.metadata!.deletionTimestamp = new Date();
  watch.event('MODIFIED', deleting);
  cluster.opened[0]!.data('old\n');
  cluster.opened[0]!.end();
  watch.event('ADDED', pod('web-2', 'web', []));
  watch.event('MODIFIED', pod('web-2', 'web'));
  // Its container restarts: a new run, a new log.
  watch.event('MODIFIED', pod('web-2', 'web', ['web-2-r2']));
  assert.deepEqual(
    cluster.opened.map((s) => [s.run.pod, s.run.runId, JSON.stringify(s.query)]),
    [
      ['web-1', 'web-1-r1', '{"follow":true,"tailLines":10,"timestamps":true}'],
      ['web-2', 'web-2-r1', '{"follow":true,"timestamps":true}'],
      ['web-2', 'web-2-r2', '{"follow":true,"timestamps":true}'],
    ],
  );
  cluster.opened[1]!.data('new\n');
  controller.abort();
  await tick();
  assert.equal(cluster.opened.length, 3, 'the log of the deleted pod is not opened again');
  assert.deepEqual(await run, { failed: 0 });
  assert.ok(watch.stopped, 'the watch is stopped');
  assert.ok(
    cluster.opened.slice(1).every((s) => s.stopped),
    'every open log is stopped',
  );
  assert.deepEqual(o.lines, ['web-1/main: old', 'web-2/main: new']);
  assert.deepEqual(o.notices, []);
});

test('follow: a watch that ends is followed by a new list (pods that came meanwhile) and a new watch; a failed one waits first', async () => {
  const cluster = fakeCluster([]);
  const o = output();
  const controller = new AbortController();
  const run = new PodLogs(cluster.api, request({ follow: true }), o.out, { minMs: 1, maxMs: 2 }).run(controller.signal);
  await tick();
  assert.deepEqual(o.notices, ['no pods of environment shop in namespace dev yet; waiting for them']);
  cluster.set([pod('web-1', 'web')]);
  cluster.watches[0]!.done(null);
  await tick();
  assert.deepEqual(
    cluster.opened.map((s) => s.run.pod),
    ['web-1'],
  );
  assert.equal(cluster.watches[1]!.from, '2');
  cluster.watches[1]!.event('ERROR', { message: 'too old resource version' } as never);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(cluster.watches.length, 3);
  assert.equal(cluster.lists.length, 3, 'listed at start and after each watch');
  assert.deepEqual(
    cluster.opened.map((s) => s.run.pod),
    ['web-1'],
    'the pod listed again is not opened again',
  );
  controller.abort();
  await run;
});

test('follow: a log failing after the stop is no failure', async () => {
  const cluster = fakeCluster([pod('web-1', 'web')]);
  const o = output();
  const controller = new AbortController();
  const logs = new PodLogs(cluster.api, request({ follow: true }), o.out);
  const run = logs.run(controller.signal);
  await tick();
  controller.abort();
  cluster.opened[0]!.end(new Error('socket hang up'));
  assert.deepEqual(await run, { failed: 0 });
  assert.deepEqual(o.notices, []);
});

test('follow: a log cut while its container runs is opened again from its last line, none lost, none twice', async () => {
  const cluster = fakeCluster([pod('web-1', 'web')]);
  const o = output();
  const controller = new AbortController();
  const run = new PodLogs(cluster.api, request({ follow: true, tailLines: 2 }), o.out, { minMs: 1, maxMs: 2 }).run(controller.signal);
  await tick();
  const first = cluster.opened[0]!;
  first.data('2026-12-02T10:00:01.5Z one\n2026-12-02T10:00:02Z two\n');
  first.end(new Error('the connection closed before the log ended'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  const again = cluster.opened[1]!;
  assert.deepEqual(again.query, { follow: true, sinceTime: '2026-12-02T10:00:02Z', timestamps: true });
  // The API server sends again the lines of the second the time names.
  again.data('2026-12-02T10:00:02Z two\n2026-12-02T10:00:02.000000001Z three\n');
  // It ends with its container this time: not opened again.
  const exited = pod('web-1', 'web');
  exited.status!.containerStatuses![0]!.state = { terminated: { exitCode: 0 } };
  cluster.watches[0]!.event('MODIFIED', exited);
  again.end();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(cluster.opened.length, 2);
  assert.deepEqual(o.lines, ['web-1/main: one', 'web-1/main: two', 'web-1/main: three']);
  assert.deepEqual(o.notices, [], 'a cut log opened again is no failure');
  controller.abort();
  assert.deepEqual(await run, { failed: 0 });
});

test('follow: reopened logs that bring nothing are given up after a few; --timestamps keeps the times', async () => {
  const cluster = fakeCluster([pod('web-1', 'web')]);
  const o = output();
  const controller = new AbortController();
  const run = new PodLogs(cluster.api, request({ follow: true, timestamps: true }), o.out, { minMs: 1, maxMs: 2 }).run(controller.signal);
  await tick();
  cluster.opened[0]!.data('2026-12-02T10:00:01Z one\n');
  for (let i = 0; i < 5; i++) {
    cluster.opened.at(-1)!.end(new Error('refused'));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(cluster.opened.length, 5, 'the first, and 1 + 3 quiet ones');
  assert.deepEqual(o.lines, ['web-1/main: 2026-12-02T10:00:01Z one']);
  assert.deepEqual(o.notices, ['[web/web-1] the log could not be read: refused']);
  controller.abort();
  assert.deepEqual(await run, { failed: 1 });
});
