import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { REPLICAS_BEFORE_SLEEP } from '../../api/namespace-sleep.ts';
import { NamespaceSleepWatch, putToSleep } from './namespace-asleep.ts';

const deployment = (replicas: number, kept?: string): V1Deployment => ({
  metadata: { name: 'web-dev', ...(kept ? { annotations: { [REPLICAS_BEFORE_SLEEP]: kept } } : {}) },
  spec: { replicas, selector: {}, template: {} },
});

test('a dev Deployment at zero with the sleep mark is asleep; scaled down otherwise, or marked and running, it is not', () => {
  assert.equal(putToSleep([deployment(0, '1')]), true);
  assert.equal(putToSleep([deployment(0)]), false, 'scaled to zero by someone else');
  assert.equal(putToSleep([deployment(1, '1')]), false, 'woken meanwhile');
  assert.equal(putToSleep([]), false);
});

test('the watch looks only once no dev pod is left, and answers one line naming the wake', async () => {
  let lists = 0;
  let items = [deployment(1)];
  const client = {
    namespace: 'shop',
    apps: {
      listNamespacedDeployment: async (q: { labelSelector: string }) => {
        lists++;
        assert.equal(q.labelSelector, 'devtool.dev/dev=web');
        return { items };
      },
    },
  } as unknown as ConstructorParameters<typeof NamespaceSleepWatch>[0];
  const watch = new NamespaceSleepWatch(client, 'web', { debug: () => {} });
  let line: string | undefined;
  void watch.asleep.then((l) => {
    line = l;
  });
  watch.offer([{ metadata: { name: 'web-dev-1' } } as V1Pod]);
  assert.equal(lists, 0, 'a pod still there: nothing read');
  watch.offer([]);
  await new Promise((r) => setImmediate(r));
  assert.equal([lists, line].join(), '1,', 'running: not asleep');
  items = [deployment(0, '1')];
  watch.offer([{ metadata: { name: 'web-dev-1', deletionTimestamp: new Date() } } as V1Pod]);
  await new Promise((r) => setImmediate(r));
  assert.equal(line, "namespace shop was put to sleep: 'up web' stops; wake it with 'devtool namespace wake shop', then run 'devtool up' again");
});
