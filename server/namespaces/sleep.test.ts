import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount } from '../accounts.ts';
import { buildApp } from '../app.ts';
import type { KubeTokenIssuer } from '../kube-credentials.ts';
import { MemoryStore } from '../store/memory.ts';
import { REPLICAS_BEFORE_SLEEP, SUSPEND_BEFORE_SLEEP } from '../workloads/scaling.ts';
import { fakeOwnerCluster } from './fake-owner-cluster.ts';
import { namespaceDeps } from '../routes/namespaces.ts';
import { settleWaking, WAKING_GIVE_UP_MS, wakeNamespace } from './sleep.ts';

const T0 = new Date('2026-05-01T10:00:00.000Z');

async function setup() {
  const store = new MemoryStore();
  const fake = fakeOwnerCluster();
  const clock = { now: T0 };
  const issued: string[] = [];
  const issuer: KubeTokenIssuer = {
    async issue(user) {
      issued.push(user);
      return { token: `token-of-${user}`, expiresAt: '2027-01-01T00:00:00Z' };
    },
  };
  const kubeCredentials = { server: 'https://k8s.example:6443', certificateAuthority: 'CA', tokenSeconds: 3600, issuer };
  const app = await buildApp({
    store,
    config: { version: '9.9.9', rateLimit: { max: 1000, timeWindowMs: 60_000 } },
    now: () => clock.now,
    logStream: false,
    kubeCredentials,
    ownerCluster: fake.factory,
  });
  const alice = await createAccount(store, 'alice', false, T0);
  const bob = await createAccount(store, 'bob', false, T0);
  const root = await createAccount(store, 'root', true, T0);
  await store.createNamespace({ name: 'shop', owner: 'alice', personal: false });
  fake.deployments.set('shop', [
    { metadata: { name: 'web' }, spec: { replicas: 2 } },
    { metadata: { name: 'db' }, spec: { replicas: 1 } },
    { metadata: { name: 'off' }, spec: { replicas: 0 } },
  ]);
  fake.cronJobs.set('shop', [
    { metadata: { name: 'report' }, spec: { suspend: false } },
    { metadata: { name: 'paused' }, spec: { suspend: true } },
  ]);
  const post = (token: string, name: string, action: 'sleep' | 'wake') =>
    app.inject({ method: 'POST', url: `/api/v1/namespaces/${name}/${action}`, headers: { authorization: `Bearer ${token}` } });
  const deps = namespaceDeps({ store, config: { version: '9', rateLimit: { max: 1, timeWindowMs: 1 } }, now: () => clock.now }, kubeCredentials, fake.factory);
  return { app, store, fake, clock, issued, alice, bob, root, post, deps };
}

const replicas = (h: Awaited<ReturnType<typeof setup>>) => h.fake.deployments.get('shop')!.map((d) => d.spec.replicas);
const suspends = (h: Awaited<ReturnType<typeof setup>>) => h.fake.cronJobs.get('shop')!.map((c) => c.spec.suspend);

test('the owner puts a namespace to sleep: workloads to zero as the owner, CronJobs suspended, the Namespace marked; twice changes nothing', async () => {
  const h = await setup();
  const res = await h.post(h.alice.token, 'shop', 'sleep');
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), {
    name: 'shop',
    status: 'Active',
    owner: 'alice',
    personal: false,
    sleep: { state: 'Sleeping', since: T0.toISOString(), by: 'alice' },
  });
  assert.deepEqual(replicas(h), [0, 0, 0]);
  assert.deepEqual(
    h.fake.deployments.get('shop')!.map((d) => d.metadata.annotations?.[REPLICAS_BEFORE_SLEEP]),
    ['2', '1', undefined],
  );
  assert.deepEqual(suspends(h), [true, true]);
  assert.deepEqual(h.fake.tokens, ['token-of-alice'], "the workloads change with the owner's token");
  assert.deepEqual((await h.store.getNamespace('shop'))!.marks, { sleepingSince: T0.toISOString(), sleptBy: 'alice' });

  h.clock.now = new Date(T0.getTime() + 60_000);
  const again = await h.post(h.root.token, 'shop', 'sleep');
  assert.equal(again.statusCode, 200);
  assert.deepEqual(again.json().sleep, { state: 'Sleeping', since: T0.toISOString(), by: 'alice' }, 'the first sleep is kept');
  assert.deepEqual(h.fake.tokens, ['token-of-alice', 'token-of-alice'], "an admin's sleep acts as the owner too");
});

test('wake restores exactly what ran; the waking mark goes once available, or after five minutes', async () => {
  const h = await setup();
  await h.post(h.alice.token, 'shop', 'sleep');
  const t1 = new Date(T0.getTime() + 3_600_000);
  h.clock.now = t1;
  const res = await h.post(h.alice.token, 'shop', 'wake');
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json().sleep, { state: 'Waking', since: t1.toISOString() });
  assert.deepEqual(replicas(h), [2, 1, 0]);
  assert.deepEqual(suspends(h), [false, true], 'each CronJob gets its own suspend back');
  assert.deepEqual(
    h.fake.cronJobs.get('shop')!.map((c) => c.metadata.annotations?.[SUSPEND_BEFORE_SLEEP]),
    [undefined, undefined],
  );

  assert.equal(await settleWaking(h.deps, (await h.store.getNamespace('shop'))!), 'waiting');
  h.fake.becomeAvailable('shop');
  assert.equal(await settleWaking(h.deps, (await h.store.getNamespace('shop'))!), 'awake');
  assert.deepEqual((await h.store.getNamespace('shop'))!.marks, { wokenAt: t1.toISOString() });
  const listed = await h.app.inject({ method: 'GET', url: '/api/v1/namespaces', headers: { authorization: `Bearer ${h.alice.token}` } });
  assert.equal(listed.json().namespaces.find((n: { name: string }) => n.name === 'shop').sleep, undefined);

  // A wake whose workloads never come up loses its mark after WAKING_GIVE_UP_MS.
  await h.post(h.alice.token, 'shop', 'sleep');
  await h.post(h.alice.token, 'shop', 'wake');
  h.fake.deployments.get('shop')![0]!.status = { availableReplicas: 0 };
  h.clock.now = new Date(t1.getTime() + WAKING_GIVE_UP_MS - 1);
  assert.equal(await settleWaking(h.deps, (await h.store.getNamespace('shop'))!), 'waiting');
  h.clock.now = new Date(t1.getTime() + WAKING_GIVE_UP_MS);
  assert.equal(await settleWaking(h.deps, (await h.store.getNamespace('shop'))!), 'gave-up');
  assert.equal((await h.store.getNamespace('shop'))!.marks?.wakingSince, undefined);
});

test('wakeNamespace serves the system without a user; an awake namespace stays as it is', async () => {
  const h = await setup();
  assert.deepEqual((await wakeNamespace(h.deps, 'shop')).marks, undefined, 'awake: nothing marked');
  await h.post(h.alice.token, 'shop', 'sleep');
  const woken = await wakeNamespace(h.deps, 'shop');
  assert.equal(woken.marks?.wakingSince, T0.toISOString());
  assert.deepEqual(replicas(h), [2, 1, 0]);
  assert.equal(h.fake.tokens.at(-1), 'token-of-alice');
});

test('who may: the owner or an admin; refusals are one line', async () => {
  const h = await setup();
  for (const action of ['sleep', 'wake'] as const) {
    const res = await h.post(h.bob.token, 'shop', action);
    assert.equal(res.statusCode, 403);
    assert.match(res.json().error, /^namespace shop: only its owner \(alice\) or an admin can (put it to sleep|wake it)$/);
  }
  assert.deepEqual(replicas(h), [2, 1, 0], "bob's refused sleep changed nothing");
  assert.deepEqual(h.issued, [], 'no token was issued for a refused request');
  assert.equal((await h.post(h.root.token, 'shop', 'sleep')).statusCode, 200);
  assert.equal((await h.post(h.root.token, 'shop', 'wake')).statusCode, 200);

  assert.deepEqual([(await h.post(h.alice.token, 'nowhere', 'sleep')).statusCode], [404]);
  assert.match((await h.post(h.alice.token, 'kube-system', 'sleep')).json().error, /not managed by devtool/);
  const personal = await h.post(h.bob.token, 'bob-devtool', 'sleep');
  assert.equal(personal.statusCode, 200, 'a personal namespace sleeps too');
  assert.equal(personal.json().sleep.by, 'bob');

  await h.store.createNamespace({
    name: 'pr-1',
    owner: 'alice',
    personal: false,
    preview: { scope: 'personal', pipeline: 'app', deployedAt: T0.toISOString() },
  });
  assert.deepEqual(refused(await h.post(h.alice.token, 'pr-1', 'sleep')), [
    409,
    'namespace pr-1 is a preview environment: devtool preview sleep pr-1 / devtool preview wake pr-1',
  ]);
  await h.store.deleteNamespace('shop');
  assert.deepEqual(refused(await h.post(h.alice.token, 'shop', 'sleep')), [409, 'namespace shop is being deleted: it cannot sleep or wake']);
});

test('without DEVTOOL_KUBE_SERVER the service cannot act as the owner: 503 in one line', async () => {
  const store = new MemoryStore();
  const app = await buildApp({ store, config: { version: '9', rateLimit: { max: 100, timeWindowMs: 60_000 } }, logStream: false });
  const alice = await createAccount(store, 'alice', false, T0);
  const res = await app.inject({ method: 'POST', url: '/api/v1/namespaces/alice-devtool/sleep', headers: { authorization: `Bearer ${alice.token}` } });
  assert.deepEqual(refused(res), [503, 'this devtool service cannot act as its users: its operator has not set DEVTOOL_KUBE_SERVER']);
});

const refused = (res: { statusCode: number; json(): { error: string } }) => [res.statusCode, res.json().error];

test('a namespace still waking can be put to sleep again: the waking mark goes with it', async () => {
  const h = await setup();
  await h.post(h.alice.token, 'shop', 'sleep');
  await h.post(h.alice.token, 'shop', 'wake');
  h.clock.now = new Date(T0.getTime() + 60_000);
  const res = await h.post(h.alice.token, 'shop', 'sleep');
  assert.deepEqual(res.json().sleep, { state: 'Sleeping', since: h.clock.now.toISOString(), by: 'alice' });
  assert.deepEqual((await h.store.getNamespace('shop'))!.marks, { sleepingSince: h.clock.now.toISOString(), sleptBy: 'alice', wokenAt: T0.toISOString() });
  assert.deepEqual(replicas(h), [0, 0, 0]);
});
