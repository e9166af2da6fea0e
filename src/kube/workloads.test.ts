import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Event, V1Deployment, V1Job, V1Pod } from '@kubernetes/client-node';
import { fakeKubeClient } from '../../test/command-harness.ts';
import type { ResolvedContext } from '../context/store.ts';
import type { KubeClient } from './client.ts';
import { labelSelectorString, podFailure, podRefusal, workloadState } from './workloads.ts';

const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'p' }, status });

test('image pull errors are failures, named with the image', () => {
  const f = podFailure(
    pod({
      containerStatuses: [
        {
          name: 'web',
          image: 'localhost:5000/nope:1',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } },
        },
      ],
    }),
    false,
  );
  assert.match(f!.reason, /image pull error for localhost:5000\/nope:1: not found/);
  assert.equal(f!.logs, false);
});

test('a crash loop is a failure from the second restart, with the previous log', () => {
  const status = (restartCount: number) =>
    pod({
      containerStatuses: [
        {
          name: 'web',
          image: 'x',
          imageID: '',
          ready: false,
          restartCount,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 3, containerID: '' } },
        },
      ],
    });
  assert.equal(podFailure(status(1), false), undefined, 'one restart is tolerated');
  const f = podFailure(status(2), false);
  assert.match(f!.reason, /crash loop: container web keeps exiting \(exit code 3\)/);
  assert.deepEqual([f!.logs, f!.previous], [true, true]);
});

test('a non-zero exit is the reason once the Job has failed, not before (retries); a running container is fine', () => {
  const terminated = pod({
    containerStatuses: [{ name: 'm', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1, containerID: '' } } }],
  });
  assert.match(podFailure(terminated, true)!.reason, /exited with code 1/);
  assert.equal(podFailure(terminated, false), undefined);
  const running = pod({ phase: 'Running', containerStatuses: [{ name: 'm', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] });
  assert.equal(podFailure(running, false), undefined);
});

test('an unschedulable pod is not judged by its status alone (scheduling.ts weighs the reasons)', () => {
  const message = '0/1 nodes are available: 1 Insufficient cpu.';
  assert.equal(podFailure(pod({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] }), false), undefined);
});

test('a pod waiting for its claims to bind is not failing (the provisioner is at work)', () => {
  const message =
    '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful ' +
    'for scheduling.';
  assert.equal(podFailure(pod({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] }), false), undefined);
  const unseen =
    '0/1 nodes are available: persistentvolumeclaim "api-devtool" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
  assert.equal(
    podFailure(pod({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: unseen }] }), false),
    undefined,
    'a claim applied just before the pod',
  );
  const volumeUnseen =
    '0/1 nodes are available: persistentvolume "pvc-c4b879fa-1968-4993-89eb-8c88742d0bf2" not found. preemption: 0/1 nodes are available: 1 ' +
    'Preemption is not helpful for scheduling.';
  assert.equal(
    podFailure(pod({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: volumeUnseen }] }), false),
    undefined,
    'a volume provisioned for the claim a moment ago, not yet in the scheduler cache (seen in a full run)',
  );
});

test('init containers count too', () => {
  const f = podFailure(
    pod({
      initContainerStatuses: [
        { name: 'init', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message: 'denied' } } },
      ],
    }),
    false,
  );
  assert.match(f!.reason, /image pull error for i/);
});

test('transient API failures are told apart from real ones', async () => {
  const { isTransient } = await import('./client.ts');
  assert.equal(isTransient(Object.assign(new Error('request failed, reason: connect ECONNREFUSED 127.0.0.1:6443'), {})), true);
  assert.equal(isTransient(new Error('request failed, reason: socket hang up')), true);
  assert.equal(isTransient({ code: 503, message: 'unavailable' }), true);
  assert.equal(isTransient({ code: 404, message: 'not found' }), false);
  assert.equal(isTransient({ code: 422, message: 'invalid' }), false);
  assert.equal(isTransient(new Error('field is immutable')), false);
});

test('label selectors as list calls take them', () => {
  assert.equal(labelSelectorString({ matchLabels: { app: 'web', tier: 'front' } }), 'app=web,tier=front');
  assert.equal(
    labelSelectorString({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['a', 'b'] },
        { key: 'x', operator: 'NotIn', values: ['c'] },
        { key: 'y', operator: 'Exists' },
        { key: 'z', operator: 'DoesNotExist' },
      ],
    }),
    'app=web,env in (a,b),x notin (c),y,!z',
  );
  assert.equal(labelSelectorString(undefined), '');
});

test('admission refusals of pods: Pod Security, a quota demand and a LimitRange bound last; a quota without room may pass', () => {
  const prefix = 'pods "web-7d9f-" is forbidden: ';
  assert.deepEqual(podRefusal(`${prefix}failed quota: compute: must specify limits.memory for: web`), {
    message: 'failed quota: compute: must specify limits.memory for: web',
    lasting: true,
  });
  assert.deepEqual(podRefusal(`${prefix}exceeded quota: count, requested: pods=1, used: pods=1, limited: pods=1`), {
    message: 'exceeded quota: count, requested: pods=1, used: pods=1, limited: pods=1',
    lasting: false,
  });
  assert.equal(podRefusal(`${prefix}maximum memory usage per Container is 128Mi, but limit is 256Mi`)?.lasting, true);
  assert.equal(podRefusal(`${prefix}cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000`)?.lasting, true);
  assert.equal(podRefusal(`${prefix}violates PodSecurity "restricted:latest": runAsNonRoot != true`)?.lasting, true);
  assert.equal(podRefusal('Error creating: pods "x" is forbidden: error looking up service account team/app: serviceaccount "app" not found'), undefined);
});

/** A client with only the reads workloadState makes of a Job or a Deployment, and the events given. */
function fakeClient(o: { job?: V1Job; deployment?: V1Deployment; events?: CoreV1Event[]; eventsRefused?: boolean }): KubeClient {
  const target = { context: { name: 'alpha', namespace: 'team' } as ResolvedContext, namespace: 'team' };
  return fakeKubeClient(target, {
    batch: { readNamespacedJob: async () => o.job },
    apps: { readNamespacedDeployment: async () => o.deployment },
    core: {
      listNamespacedPod: async () => ({ items: [] }),
      listNamespacedEvent: async ({ fieldSelector }: { fieldSelector: string }) => {
        assert.equal(fieldSelector, 'involvedObject.kind=Job,involvedObject.uid=u1,reason=FailedCreate');
        if (o.eventsRefused) throw new Error('events is forbidden');
        return { items: o.events ?? [] };
      },
    },
  });
}

test("a Job whose pods admission refuses: a lasting refusal fails at once, a full quota is the wait's detail, an old event says nothing", async () => {
  const ref = { kind: 'Job' as const, name: 'migrate', podSelector: 'job-name=migrate' };
  const job: V1Job = { metadata: { name: 'migrate', uid: 'u1' }, spec: { template: { spec: { containers: [] } } }, status: {} };
  const event = (message: string, agoMs: number): CoreV1Event => ({
    metadata: {},
    involvedObject: {},
    message: `Error creating: pods "migrate-x" is forbidden: ${message}`,
    lastTimestamp: new Date(Date.now() - agoMs),
  });
  const demand = 'failed quota: compute: must specify limits.cpu for: migrate';
  assert.deepEqual(await workloadState(fakeClient({ job, events: [event(demand, 1000)] }), ref), {
    state: 'failed',
    reason: `its pods are refused: ${demand}`,
  });
  const full = 'exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2';
  assert.deepEqual(await workloadState(fakeClient({ job, events: [event(full, 1000)] }), ref), {
    state: 'progressing',
    detail: `starting; its pods are refused for now: ${full}`,
  });
  assert.deepEqual(await workloadState(fakeClient({ job, events: [event(demand, 10 * 60_000)] }), ref), { state: 'progressing', detail: 'starting' });
  // Events that may not be read leave the wait as it was.
  assert.deepEqual(await workloadState(fakeClient({ job, eventsRefused: true }), ref), { state: 'progressing', detail: 'starting' });
});

test("a Deployment's ReplicaFailure: a quota's demand fails at once, a full quota is the wait's detail", async () => {
  const ref = { kind: 'Deployment' as const, name: 'web', podSelector: 'app=web' };
  const deployment = (message: string): V1Deployment => ({
    metadata: { name: 'web', generation: 1 },
    spec: { replicas: 1, selector: {}, template: {} },
    status: { observedGeneration: 1, conditions: [{ type: 'ReplicaFailure', status: 'True', message: `pods "web-1" is forbidden: ${message}` }] },
  });
  const bound = 'maximum memory usage per Container is 128Mi, but limit is 256Mi';
  assert.deepEqual(await workloadState(fakeClient({ deployment: deployment(bound) }), ref), { state: 'failed', reason: `its pods are refused: ${bound}` });
  const full = 'exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1';
  assert.deepEqual(await workloadState(fakeClient({ deployment: deployment(full) }), ref), {
    state: 'progressing',
    detail: `0/1 available; its pods are refused for now: ${full}`,
  });
});
