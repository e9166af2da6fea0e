import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryStore } from '../store/memory.ts';
import type { RunRecord } from '../store/store.ts';
import { fakeOwnerCluster } from './fake-owner-cluster.ts';
import type { NamespaceDeps } from './sleep.ts';
import { settleWakingNamespaces, sweepIdleNamespaces } from './sweeper.ts';

const H = 3_600_000;
const T0 = Date.parse('2026-05-01T00:00:00.000Z');
const at = (h: number) => new Date(T0 + h * H).toISOString();

async function setup() {
  const store = new MemoryStore();
  const fake = fakeOwnerCluster();
  const clock = { now: new Date(T0) };
  const deps: NamespaceDeps = { store, now: () => clock.now, actAs: (owner) => fake.factory(`token-of-${owner}`) };
  for (const [name, personal] of [
    ['shop', false],
    ['alice-devtool', true],
  ] as const) {
    await store.createNamespace({ name, owner: 'alice', personal });
    store.namespaces.get(name)!.createdAt = at(0);
    fake.deployments.set(name, [{ metadata: { name: 'web' }, spec: { replicas: 1 } }]);
  }
  return { store, fake, clock, deps };
}

const settings = { sleepAfterMs: 3 * H, deleteAfterMs: 24 * H };

test('idle sweep: activity found is recorded; idle namespaces sleep (by idle), later the non-personal ones are deleted', async () => {
  const h = await setup();
  h.fake.activity.set('shop', [at(2)]);
  h.clock.now = new Date(T0 + 4 * H);
  const first = await sweepIdleNamespaces(h.deps, settings);
  assert.deepEqual(first.slept, [{ name: 'alice-devtool', idleMs: 4 * H }], 'shop was deployed at 2h: not idle yet');
  assert.equal(h.store.namespaces.get('shop')!.marks?.lastActivity, at(2));
  assert.equal(h.store.namespaces.get('alice-devtool')!.marks?.sleptBy, 'idle');
  assert.equal(h.fake.deployments.get('alice-devtool')![0]!.spec.replicas, 0);
  assert.deepEqual(h.fake.tokens, ['token-of-alice', 'token-of-alice', 'token-of-alice'], 'activity read and sleep done as the owner');

  // A pipeline run at 5h keeps shop awake past 5h.
  await h.store.runs.putRecord({ namespace: 'shop', name: 'app', startedAt: at(5), finishedAt: at(5.5) } as RunRecord, undefined, {});
  h.clock.now = new Date(T0 + 6 * H);
  assert.deepEqual((await sweepIdleNamespaces(h.deps, settings)).slept, []);
  h.clock.now = new Date(T0 + 8.5 * H);
  assert.deepEqual((await sweepIdleNamespaces(h.deps, settings)).slept, [{ name: 'shop', idleMs: 3 * H }]);

  h.clock.now = new Date(T0 + 30 * H);
  const late = await sweepIdleNamespaces(h.deps, settings);
  assert.deepEqual(late.deleted, [{ name: 'shop', idleMs: 24.5 * H }]);
  assert.equal(h.store.namespaces.get('shop')!.status, 'Terminating');
  assert.equal(h.store.namespaces.get('alice-devtool')!.status, 'Active', 'a personal namespace only sleeps');
  assert.deepEqual(await sweepIdleNamespaces(h.deps, {}), { slept: [], deleted: [], failed: [] }, 'off: nothing read');
});

test('idle sweep: a running dev container, a request or a future clock keep a namespace awake as far as they say', async () => {
  const h = await setup();
  h.clock.now = new Date(T0 + 10 * H);
  h.fake.activity.set('shop', [h.clock.now.toISOString()]);
  await h.store.setNamespaceMarks('alice-devtool', { lastRequest: at(9) });
  assert.deepEqual(await sweepIdleNamespaces(h.deps, settings), { slept: [], deleted: [], failed: [] });
  h.fake.activity.set('shop', [at(100)]);
  await sweepIdleNamespaces(h.deps, settings);
  assert.equal(h.store.namespaces.get('shop')!.marks?.lastActivity, at(10), 'a time ahead of the clock counts as now');
});

test('waking sweep: the mark goes once the workloads are available; failures are reported per namespace', async () => {
  const h = await setup();
  await h.store.setNamespaceMarks('shop', { wakingSince: at(0) });
  h.fake.deployments.get('shop')![0]!.status = { availableReplicas: 0 };
  assert.deepEqual(await settleWakingNamespaces(h.deps), { awake: [], gaveUp: [], failed: [] });
  h.fake.becomeAvailable('shop');
  assert.deepEqual(await settleWakingNamespaces(h.deps), { awake: ['shop'], gaveUp: [], failed: [] });
  assert.equal(h.store.namespaces.get('shop')!.marks?.wakingSince, undefined);

  await h.store.setNamespaceMarks('shop', { wakingSince: at(0) });
  const broken: NamespaceDeps = { ...h.deps, actAs: async () => Promise.reject(new Error('no token')) };
  assert.deepEqual(await settleWakingNamespaces(broken), { awake: [], gaveUp: [], failed: [{ name: 'shop', error: 'no token' }] });
});
