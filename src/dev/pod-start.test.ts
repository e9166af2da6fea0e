import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { podStartStep, watchPodStart, type PodWatchApi } from './pod-start.ts';

const scheduled = { type: 'PodScheduled', status: 'True' };
const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'api-devtool-1' }, status });

test('each step of a dev pod start is one line, in the order the kubelet takes them', () => {
  const steps = [
    pod({ phase: 'Pending' }),
    pod({ phase: 'Pending', conditions: [scheduled] }),
    pod({
      phase: 'Pending',
      conditions: [scheduled],
      initContainerStatuses: [
        { name: 'devtool-bin', ready: false, restartCount: 0, image: '', imageID: '', state: { waiting: { reason: 'PodInitializing' } } },
      ],
    }),
    pod({
      phase: 'Pending',
      conditions: [scheduled],
      initContainerStatuses: [{ name: 'devtool-bin', ready: false, restartCount: 0, image: '', imageID: '', state: { running: {} } }],
    }),
    pod({
      phase: 'Pending',
      conditions: [scheduled],
      initContainerStatuses: [{ name: 'devtool-bin', ready: false, restartCount: 0, image: '', imageID: '', state: { terminated: { exitCode: 0 } } }],
      containerStatuses: [{ name: 'node', ready: false, restartCount: 0, image: '', imageID: '', state: { waiting: { reason: 'PodInitializing' } } }],
    }),
    pod({
      phase: 'Running',
      conditions: [scheduled],
      initContainerStatuses: [{ name: 'devtool-bin', ready: false, restartCount: 0, image: '', imageID: '', state: { terminated: { exitCode: 0 } } }],
      containerStatuses: [{ name: 'node', ready: true, restartCount: 0, image: '', imageID: '', state: { running: {} } }],
    }),
  ].map(podStartStep);
  assert.deepEqual(steps, [
    'pod api-devtool-1: waiting to be scheduled',
    'pod api-devtool-1: scheduled',
    'pod api-devtool-1: init container devtool-bin waiting (PodInitializing)',
    'pod api-devtool-1: init container devtool-bin running',
    'pod api-devtool-1: node waiting (PodInitializing)',
    'pod api-devtool-1: ready',
  ]);
});

test('a failed init container and an ending pod say so', () => {
  const failed = pod({
    conditions: [scheduled],
    initContainerStatuses: [{ name: 'devtool-bin', ready: false, restartCount: 1, image: '', imageID: '', state: { terminated: { exitCode: 2 } } }],
  });
  assert.equal(podStartStep(failed), 'pod api-devtool-1: init container devtool-bin ended (exit 2)');
  assert.equal(podStartStep({ metadata: { name: 'p', deletionTimestamp: new Date() } }), 'pod p: ending');
});

test('the watch logs each new step once and cuts the caller’s pause short', async () => {
  let emit: (type: string, pod: V1Pod) => void = () => undefined;
  let aborted = false;
  const api: PodWatchApi = {
    watch: async (_selector, event) => {
      emit = event;
      return { abort: () => (aborted = true) };
    },
  };
  const logged: string[] = [];
  const w = watchPodStart(api, 'devtool.dev/dev-pod=api', (l) => logged.push(l));
  await new Promise((r) => setImmediate(r));
  const started = Date.now();
  const pause = w.sleep(10_000);
  emit('MODIFIED', pod({ phase: 'Pending', conditions: [scheduled] }));
  await pause;
  assert.ok(Date.now() - started < 1000, 'the pause ended with the event');
  emit('MODIFIED', pod({ phase: 'Pending', conditions: [scheduled] }));
  emit('DELETED', pod({ phase: 'Pending', conditions: [scheduled] }));
  assert.deepEqual(logged, ['pod api-devtool-1: scheduled', 'pod api-devtool-1: deleted']);
  const quiet = Date.now();
  await w.sleep(30);
  assert.ok(Date.now() - quiet >= 25, 'without an event, the pause lasts');
  w.stop();
  assert.equal(aborted, true);
});
