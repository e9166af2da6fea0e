import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { labelSelectorString, podFailure, podRefusal } from './workloads.ts';

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
