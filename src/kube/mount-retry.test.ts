import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { BOUND_FOR_MS, MAX_RETRIES, MOUNT_RETRY_ANNOTATION, MountRetry, mountFailureReason, unansweredMountFailure, waitsForKubelet } from './mount-retry.ts';

// The kubelet v1.33's event, as it recorded it for a dev pod of a full run of the suite.
const REFUSED =
  'Unable to attach or mount volumes: unmounted volumes=[devtool-config devtool-data], unattached volumes=[], failed to process volumes=[devtool-data]: ' +
  'error processing PVC dev-sync-mx10g6ih/web-devtool: failed to fetch PVC from API server: persistentvolumeclaims "web-devtool" is forbidden: ' +
  'User "system:node:vm" cannot get resource "persistentvolumeclaims" in API group "" in the namespace "dev-sync-mx10g6ih": ' +
  "no relationship found between node 'vm' and this object";
// A mount that is merely slow or failing in the volume plugin: the kubelet retries that itself.
const SLOW =
  'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], failed to process volumes=[]: timed out waiting for the condition';

const pod = (over: Partial<V1Pod['status']> = {}, uid = 'pod-1'): V1Pod => ({
  metadata: { name: 'web-devtool-abc', uid },
  spec: { nodeName: 'vm', containers: [] },
  status: {
    conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: new Date(0) }],
    containerStatuses: [{ name: 'dev', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }],
    ...over,
  },
});
const event = (message: string, count = 1, podUid = 'pod-1', uid = 'ev-1'): CoreV1Event => ({
  metadata: { uid },
  involvedObject: { kind: 'Pod', uid: podUid },
  reason: 'FailedMount',
  message,
  count,
});

test('a pod waits for the kubelet while bound and none of its containers has started', () => {
  assert.equal(waitsForKubelet(pod()), true);
  assert.equal(waitsForKubelet({ ...pod(), spec: { containers: [] } }), false, 'not bound to a node yet');
  const started = pod({ containerStatuses: [{ name: 'dev', image: 'x', imageID: '', ready: false, restartCount: 0, state: { running: {} } }] });
  assert.equal(waitsForKubelet(started), false);
  const initDone = pod({
    initContainerStatuses: [{ name: 'agent', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } }],
  });
  assert.equal(waitsForKubelet(initDone), false, 'its volumes were mounted: an init container ran');
  assert.equal(waitsForKubelet({ ...pod(), metadata: { deletionTimestamp: new Date() } }), false);
});

test("the kubelet's failure to read the volumes is answered once per new occurrence, for this pod only", () => {
  const answered = new Map<string, number>();
  assert.equal(unansweredMountFailure(pod(), [event(REFUSED)], answered)?.count, 1);
  answered.set('ev-1', 1);
  assert.equal(unansweredMountFailure(pod(), [event(REFUSED)], answered), undefined, 'already answered');
  assert.equal(unansweredMountFailure(pod(), [event(REFUSED, 2)], answered)?.count, 2, 'it failed again after the answer');
  assert.equal(unansweredMountFailure(pod(), [event(REFUSED, 1, 'an-earlier-pod')], new Map()), undefined);
  assert.equal(unansweredMountFailure(pod(), [event(SLOW)], new Map()), undefined, 'a slow mount is not a refused read');
});

test('the reason kept for devtool.log is what the API server said', () => {
  assert.match(mountFailureReason(REFUSED), /^failed to fetch PVC from API server: persistentvolumeclaims "web-devtool" is forbidden/);
  assert.ok(mountFailureReason(REFUSED).length <= 201);
});

/** A narrow fake of the two calls MountRetry makes. */
function fakeCore(events: CoreV1Event[], failPatch?: Error) {
  const patches: { name: string; value: string }[] = [];
  let listed = 0;
  const core = {
    listNamespacedEvent: async () => {
      listed++;
      return { items: events };
    },
    patchNamespacedPod: async (req: { name: string; body: { metadata: { annotations: Record<string, string> } } }) => {
      if (failPatch) throw failPatch;
      patches.push({ name: req.name, value: req.body.metadata.annotations[MOUNT_RETRY_ANNOTATION] ?? '' });
      return {};
    },
  };
  return { client: { core, namespace: 'ns' } as never, patches, listed: () => listed };
}

test('MountRetry sets the annotation on each new failure, at most MAX_RETRIES times, and never for a pod bound just now', async () => {
  const events = [event(REFUSED)];
  const fake = fakeCore(events);
  const lines: string[] = [];
  let now = 5000;
  const retry = new MountRetry(
    fake.client,
    (l) => lines.push(l),
    () => now,
  );
  await retry.check([pod()]);
  now += BOUND_FOR_MS - 1;
  await retry.check([pod()]);
  assert.equal(fake.listed(), 0, 'no events read for a pod first seen bound less than BOUND_FOR_MS ago');
  now += 1;
  await retry.check([pod()]);
  await retry.check([pod()]);
  assert.deepEqual(fake.patches, [{ name: 'web-devtool-abc', value: '1' }], 'one ask for one failure');
  assert.match(lines[0] ?? '', /could not read its volumes yet \(failed to fetch PVC from API server: .*forbidden.*\); asking it to try again now/);
  for (let n = 2; n <= MAX_RETRIES + 2; n++) {
    events[0] = event(REFUSED, n);
    await retry.check([pod()]);
  }
  assert.equal(fake.patches.length, MAX_RETRIES);
  assert.deepEqual(
    fake.patches.map((p) => p.value),
    Array.from({ length: MAX_RETRIES }, (_, i) => String(i + 1)),
  );
});

test('MountRetry that may not patch pods says so once and leaves the pod to the kubelet', async () => {
  const fake = fakeCore([event(REFUSED)], new Error('pods "web-devtool-abc" is forbidden'));
  const lines: string[] = [];
  let now = 5000;
  const retry = new MountRetry(
    fake.client,
    (l) => lines.push(l),
    () => now,
  );
  await retry.check([pod()]);
  now += BOUND_FOR_MS;
  await retry.check([pod()]);
  await retry.check([pod()]);
  assert.equal(lines.filter((l) => l.includes('not asking the kubelet')).length, 1);
  assert.equal(fake.listed(), 1);
});
