import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type PodSummary, endpointsOf, environmentSummary, ingressSummary, podCounts, podSummary, podsOf, workloadSummary } from './model.ts';

describe('dashboard summaries', () => {
  test('a pod: its status, readiness, restarts and the last failure', () => {
    const crashing = podSummary({
      metadata: { name: 'web-1', labels: { app: 'web' } },
      spec: { containers: [{ name: 'main' }, { name: 'proxy' }] },
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'main',
            containerID: 'containerd://c3',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { reason: 'Error', exitCode: 1 } },
          },
        ],
      },
    });
    assert.deepEqual(crashing, {
      name: 'web-1',
      status: 'CrashLoopBackOff',
      ready: false,
      restarts: 3,
      lastFailure: 'CrashLoopBackOff',
      labels: { app: 'web' },
      // Its containers with the instance whose log there is; one never started has none.
      containers: [{ name: 'main', instance: 'containerd://c3' }, { name: 'proxy' }],
    });
    const recovered = podSummary({
      metadata: { name: 'web-2' },
      status: {
        phase: 'Running',
        containerStatuses: [{ ready: true, restartCount: 1, state: {}, lastState: { terminated: { reason: 'OOMKilled', exitCode: 137 } } }],
      },
    });
    assert.deepEqual(recovered, {
      name: 'web-2',
      status: 'Running',
      ready: true,
      restarts: 1,
      lastFailure: 'OOMKilled, exit code 137',
      labels: {},
      containers: [],
    });
    const starting = podSummary({
      metadata: { name: 'p' },
      status: { phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'ContainerCreating' } } }] },
    });
    assert.equal(starting.status, 'Pending');
    assert.equal(starting.lastFailure, undefined);
    assert.equal(podSummary({ metadata: { name: 'p', deletionTimestamp: '2026-12-02T10:00:00Z' }, status: { phase: 'Running' } }).status, 'Terminating');
    assert.equal(
      podSummary({ metadata: { name: 'p' }, status: { phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'ImagePullBackOff' } } }] } })
        .lastFailure,
      'ImagePullBackOff',
    );
  });

  test('workloads select their pods by every label of the selector; counts leave finished pods out', () => {
    const w = workloadSummary('Deployment')({
      metadata: { name: 'web', labels: { 'devtool.dev/environment': 'shop' } },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web', tier: 'f' } } },
      status: {},
    });
    assert.deepEqual(w, { kind: 'Deployment', name: 'web', desired: 2, ready: 0, environment: 'shop', selector: { app: 'web', tier: 'f' } });
    const pods: PodSummary[] = [
      { name: 'a', status: 'Running', ready: true, restarts: 0, labels: { app: 'web', tier: 'f' }, containers: [] },
      { name: 'b', status: 'Running', ready: false, restarts: 0, labels: { app: 'web' }, containers: [] },
      { name: 'c', status: 'Succeeded', ready: false, restarts: 0, labels: { app: 'web', tier: 'f' }, containers: [] },
    ];
    assert.deepEqual(
      podsOf(w, pods).map((p) => p.name),
      ['a', 'c'],
    );
    assert.deepEqual(podsOf({ ...w, selector: {} }, pods), [], 'an empty selector claims nothing');
    assert.deepEqual(podCounts(pods), { ready: 1, total: 2 });
  });

  test("an environment's record and its endpoints from its Ingresses", () => {
    assert.deepEqual(
      environmentSummary({
        metadata: { name: 'devtool-env-shop', labels: { 'devtool.dev/environment-state': 'shop' } },
        data: { name: 'shop', status: 'error', source: 'manifest', updated: '2026-12-02T10:00:00Z', error: 'boom', manifest: 'big' },
      }),
      { name: 'shop', status: 'error', source: 'manifest', updated: '2026-12-02T10:00:00Z', error: 'boom' },
    );
    const ingresses = [
      ingressSummary({
        metadata: { name: 'a', labels: { 'devtool.dev/environment': 'shop' } },
        spec: { rules: [{ host: 'b.example' }, { host: 'a.example' }, {}] },
      }),
      ingressSummary({ metadata: { name: 'z', labels: { 'devtool.dev/environment': 'other' } }, spec: { rules: [{ host: 'z.example' }] } }),
    ];
    assert.deepEqual(endpointsOf('shop', ingresses), ['https://a.example', 'https://b.example']);
  });

  test("a dev Deployment's session state: decoded when well-formed, ignored otherwise, never on a StatefulSet", () => {
    const state = {
      format: 1,
      user: 'ann',
      version: '0.1.0',
      startedAt: '2026-12-02T11:00:00Z',
      heartbeatAt: '2026-12-02T11:59:40Z',
      sync: { state: 'watching' },
      conflicts: { total: 0, latest: [] },
      forwards: [],
      connection: { state: 'connected' },
    };
    const dev = (value: string) => ({ metadata: { name: 'web-devtool', annotations: { 'devtool.dev/session': value } }, spec: {}, status: {} });
    assert.deepEqual(workloadSummary('Deployment')(dev(JSON.stringify(state))).session, state);
    assert.equal(workloadSummary('Deployment')(dev(JSON.stringify({ ...state, extra: 1 }))).session, undefined);
    assert.equal(workloadSummary('Deployment')(dev('{not json')).session, undefined);
    assert.equal(workloadSummary('StatefulSet')(dev(JSON.stringify(state))).session, undefined);
  });
});
