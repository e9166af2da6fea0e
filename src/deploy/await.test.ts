/**
 * The rollout waiter's decisions, driven by an in-memory RolloutReader: when a workload counts as
 * ready, what ends the wait at once, what is retried, and what the timeout says.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { RolloutStep } from '../compose/translate.ts';
import type { WorkloadRef, WorkloadState } from '../kube/workloads.ts';
import { awaitCondition, awaitEnvironmentWorkloads, awaitWorkloadReady, Deadline, WorkloadFailure, type RolloutReader } from './await.ts';
import { Progress } from './progress.ts';

const web: WorkloadRef = { kind: 'Deployment', name: 'web', podSelector: 'app=web' };

/** One answer per call, the last one repeated; an Error answer is thrown. */
function script<T>(answers: (T | Error)[]): { next(): Promise<T>; calls: number } {
  const s = {
    calls: 0,
    next: async (): Promise<T> => {
      const a = answers[Math.min(s.calls, answers.length - 1)]!;
      s.calls++;
      if (a instanceof Error) throw a;
      return a;
    },
  };
  return s;
}

function apiError(code: number): Error {
  return Object.assign(new Error(`HTTP ${code}`), { code });
}

const runningPod = (name: string, running = true): V1Pod => ({
  metadata: { name },
  status: {
    phase: 'Running',
    containerStatuses: [
      { name: 'c', image: 'x', imageID: '', restartCount: 0, ready: running, state: running ? { running: {} } : { waiting: { reason: 'CrashLoopBackOff' } } },
    ],
  },
});

/** A reader of one namespace's workloads; what each call answers is set by the test. */
function fakeReader(o: Partial<RolloutReader> = {}): RolloutReader {
  return {
    state: o.state ?? (async () => ({ state: 'ready' })),
    pods: o.pods ?? (async () => [runningPod('web-1')]),
    serviceHasReadyEndpoint: o.serviceHasReadyEndpoint ?? (async () => true),
    acceptsTcp: o.acceptsTcp ?? (async () => true),
    workloadsByLabel: o.workloadsByLabel ?? (async () => []),
    deletePod: o.deletePod ?? (async () => assert.fail('no pod is deleted')),
  };
}

function step(over: Partial<RolloutStep> = {}): RolloutStep {
  return { service: 'web', kind: 'Deployment', name: 'web', replicas: 1, dependsOn: [], healthyBy: 'tcp', tcpPorts: [8080], ...over };
}

function progressLines(): { progress: Progress; lines: string[] } {
  const lines: string[] = [];
  return { progress: new Progress({ write: (t: string) => lines.push(...t.replace(/\n$/, '').split('\n')) }, () => new Date(0)), lines };
}

test('a workload is ready once its containers have run for three polls in a row: a crash in between starts the count again', async () => {
  // ready, ready, crashed, ready, ready, ready: the wait ends on the sixth poll, not the third.
  const pods = script([
    [runningPod('w')],
    [runningPod('w')],
    [runningPod('w', false)],
    [runningPod('w')],
    [runningPod('w')],
    [runningPod('w')],
    new Error('polled after it was ready'),
  ]);
  await awaitWorkloadReady(fakeReader({ pods: pods.next }), { ref: web, what: 'Deployment/web' }, new Deadline(60_000));
  assert.equal(pods.calls, 6);
});

test('a failing probe ends the wait at once with the reason and the log tail, long before the deadline', async () => {
  const failed: WorkloadState = { state: 'failed', reason: 'readiness probe failed: connection refused on port 8080', logTail: 'listening on 9090' };
  const started = Date.now();
  const err = await awaitWorkloadReady(fakeReader({ state: async () => failed }), { ref: web, what: 'Deployment/web' }, new Deadline(60_000)).catch(
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkloadFailure, `${String(err)}`);
  assert.equal(err.message, 'Deployment/web failed: readiness probe failed: connection refused on port 8080');
  assert.equal(err.logTail, 'listening on 9090');
  assert.ok(Date.now() - started < 5000);
});

test('a workload that never becomes ready times out, saying how far it got', async () => {
  const state = script<WorkloadState>([{ state: 'progressing', detail: '0/2 available' }]);
  await assert.rejects(
    awaitWorkloadReady(fakeReader({ state: state.next }), { ref: web, what: 'Deployment/web' }, new Deadline(200)),
    /^DevtoolError: timed out after .* waiting for Deployment\/web to be ready \(0\/2 available\)$/,
  );
  assert.ok(state.calls >= 1);
});

test('the API server going away is waited out; any other error ends the wait', async () => {
  const flaky = script<WorkloadState>([
    apiError(503),
    apiError(500),
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    { state: 'completed' },
  ]);
  await awaitWorkloadReady(fakeReader({ state: flaky.next }), { ref: { ...web, kind: 'Job' }, what: 'Job/migrate' }, new Deadline(60_000));
  assert.equal(flaky.calls, 4);

  const forbidden = script<WorkloadState>([apiError(403), { state: 'completed' }]);
  await assert.rejects(awaitWorkloadReady(fakeReader({ state: forbidden.next }), { ref: web, what: 'Deployment/web' }, new Deadline(60_000)), /HTTP 403/);
  assert.equal(forbidden.calls, 1);
});

test('service_healthy without a healthcheck waits until a running pod accepts a connection and the Service routes to it', async () => {
  const tcp = script([false, false, true]);
  const routed = script([false, true]);
  const reader = fakeReader({
    state: async () => ({ state: 'progressing', detail: '0/1 available' }),
    acceptsTcp: tcp.next,
    serviceHasReadyEndpoint: routed.next,
  });
  await awaitCondition(reader, 'shop', step(), 'service_healthy', new Deadline(60_000));
  assert.deepEqual([tcp.calls, routed.calls], [4, 7], 'a TCP check per poll until a pod accepts and is routed; then the Service only');
});

test('a dependency ready long before (a redeploy with it unchanged) counts at once, with no settling wait', async () => {
  const readyFor = (ms: number): V1Pod => ({
    ...runningPod('cache-1'),
    status: { ...runningPod('cache-1').status, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(Date.now() - ms) }] },
  });
  const tcp = script([true]);
  const routed = script([true]);
  const started = Date.now();
  await awaitCondition(
    fakeReader({ pods: async () => [readyFor(5 * 60_000)], acceptsTcp: tcp.next, serviceHasReadyEndpoint: routed.next }),
    'shop',
    step(),
    'service_healthy',
    new Deadline(60_000),
  );
  assert.deepEqual([tcp.calls, routed.calls], [1, 1]);
  assert.ok(Date.now() - started < 400, 'no poll interval waited');
  // Ready a moment ago: the route settles first.
  const fresh = script([true]);
  await awaitCondition(
    fakeReader({ pods: async () => [readyFor(1_000)], serviceHasReadyEndpoint: fresh.next }),
    'shop',
    step(),
    'service_healthy',
    new Deadline(60_000),
  );
  assert.equal(fresh.calls, 6);
});

test('a dependency reached through its Service counts once the ready endpoint held 6 polls in a row, to let kube-proxy program the route', async () => {
  // Routed, then gone (the pod restarted), then routed for good: the count starts again.
  const routed = script([true, true, false, true]);
  await awaitCondition(fakeReader({ serviceHasReadyEndpoint: routed.next }), 'shop', step(), 'service_started', new Deadline(60_000));
  assert.equal(routed.calls, 9);
  const job = script([true]);
  await awaitCondition(fakeReader({ serviceHasReadyEndpoint: job.next }), 'shop', step({ kind: 'Job' }), 'service_started', new Deadline(60_000));
  assert.equal(job.calls, 0, 'nothing reaches a one-off job through a Service');
});

test('service_healthy with a healthcheck is the probe: a pod accepting connections is not enough', async () => {
  const reader = fakeReader({ state: async () => ({ state: 'progressing', detail: '0/1 ready' }) });
  await assert.rejects(
    awaitCondition(reader, 'shop', step({ healthyBy: 'probe' }), 'service_healthy', new Deadline(200)),
    /timed out after .* waiting for service "web" to be healthy \(0\/1 ready\)/,
  );
});

test('a long-running service awaited to complete successfully is refused without polling', async () => {
  const state = script<WorkloadState>([{ state: 'ready' }]);
  await assert.rejects(
    awaitCondition(fakeReader({ state: state.next }), 'shop', step(), 'service_completed_successfully', new Deadline(60_000)),
    /is a long-running service; give it restart: "no"/,
  );
  assert.equal(state.calls, 0);
});

test('--wait on what deploy commands made: the first failure is reported with its log tail and stops the other waits', async () => {
  const workloads: (WorkloadRef & { labels: Record<string, string> })[] = [
    { kind: 'Deployment', name: 'api', podSelector: 'app=api', labels: {} },
    { kind: 'Job', name: 'migrate', podSelector: '', labels: {} },
    { kind: 'Deployment', name: 'skipped', podSelector: 'app=skipped', labels: { 'devtool.dev/service': 'x' } },
  ];
  const asked: string[] = [];
  const reader = fakeReader({
    workloadsByLabel: async () => workloads,
    state: async (ref) => {
      asked.push(`${ref.kind}/${ref.name} ${ref.podSelector}`);
      return ref.kind === 'Job'
        ? { state: 'failed', reason: 'job failed: BackoffLimitExceeded', logTail: 'relation "users" does not exist' }
        : { state: 'progressing', detail: '0/1 available' };
    },
  });
  const { progress, lines } = progressLines();
  await assert.rejects(
    awaitEnvironmentWorkloads(reader, 'shop', new Deadline(60_000), progress, (labels) => 'devtool.dev/service' in labels),
    /Job\/migrate failed: job failed: BackoffLimitExceeded/,
  );
  assert.deepEqual(lines, [
    '• waiting for Deployment/api, Job/migrate',
    '✗ Job/migrate failed: job failed: BackoffLimitExceeded',
    '    relation "users" does not exist',
  ]);
  assert.ok(
    asked.includes('Job/migrate devtool.dev/environment=shop'),
    `a workload without a selector is awaited through its environment's pods: ${asked.join('; ')}`,
  );
  assert.ok(!asked.some((a) => a.startsWith('Deployment/skipped')), 'what skip accepts is not awaited');
  const polls = asked.length;
  await new Promise((r) => setTimeout(r, 800));
  assert.equal(asked.length, polls, 'the wait for Deployment/api ended with the failure');
});

test('--wait with nothing to wait for says so', async () => {
  const { progress, lines } = progressLines();
  await awaitEnvironmentWorkloads(fakeReader(), 'shop', new Deadline(60_000), progress);
  assert.deepEqual(lines, ['• --wait: no Deployment, StatefulSet, DaemonSet or Job of the environment to wait for']);
});

test('--wait: a pull error for an image the deploy pushed deletes that pod once; a second one fails', async () => {
  const pullError = (pod: string, image: string): WorkloadState => ({ state: 'failed', reason: `image pull error for ${image}: not found`, pod, image });
  const states = script<WorkloadState>([
    pullError('web-1', 'localhost:5000/web:dev'),
    { state: 'progressing', detail: '0/1 available' },
    pullError('web-2', 'localhost:5000/web:dev'),
  ]);
  const deleted: string[] = [];
  const reader = fakeReader({
    workloadsByLabel: async () => [{ ...web, labels: {} }],
    state: states.next,
    deletePod: async (name) => {
      deleted.push(name);
    },
  });
  const { progress, lines } = progressLines();
  await assert.rejects(
    awaitEnvironmentWorkloads(reader, 'shop', new Deadline(60_000), progress, () => false, new Set(['localhost:5000/web:dev'])),
    /Deployment\/web failed: image pull error for localhost:5000\/web:dev/,
  );
  assert.deepEqual(deleted, ['web-1'], 'once per workload and image: a pod that cannot pull it after the push is a failure');
  assert.match(lines[1]!, /Deployment\/web: pod web-1 could not pull localhost:5000\/web:dev before this deploy pushed it: deleting it/);
  // An image the deploy did not push: a failure at once.
  const other = fakeReader({ workloadsByLabel: async () => [{ ...web, labels: {} }], state: async () => pullError('web-1', 'localhost:5000/other:1') });
  await assert.rejects(
    awaitEnvironmentWorkloads(other, 'shop', new Deadline(60_000), progressLines().progress, () => false, new Set(['localhost:5000/web:dev'])),
    /image pull error for localhost:5000\/other:1/,
  );
});
