import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FRONT_DOOR_KEY_HEADER, WAKE_HOST_HEADER, WAKE_NAMESPACE_HEADER, WAKING_PATH } from '../../api/front-door.ts';
import { createAccount } from '../accounts.ts';
import { buildApp } from '../app.ts';
import type { KubeTokenIssuer } from '../kube-credentials.ts';
import { fakeOwnerCluster } from '../namespaces/fake-owner-cluster.ts';
import { sleepNamespace } from '../namespaces/sleep.ts';
import { namespaceDeps } from '../routes/namespaces.ts';
import { MemoryStore } from '../store/memory.ts';
import { namespaceWaking } from './namespace-waking.ts';
import { WakeOnce } from './wake-once.ts';

const KEY = 'a-front-door-key-of-at-least-32-characters';
const T0 = new Date('2026-12-02T10:00:00.000Z');
const until = async (ok: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 300 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(await ok(), `${what}: not within 3 s`);
};

/** The service's own sleep and wake on the in-memory store and a fake cluster of alice's: shop asleep. */
async function setup() {
  const store = new MemoryStore();
  const fake = fakeOwnerCluster();
  const issued: string[] = [];
  const issuer: KubeTokenIssuer = {
    async issue(user) {
      issued.push(user);
      return { token: `token-of-${user}`, expiresAt: '2027-01-01T00:00:00Z' };
    },
  };
  const kubeCredentials = { server: 'https://k8s.example:6443', certificateAuthority: 'CA', tokenSeconds: 3600, issuer };
  const config = { version: '9.9.9', rateLimit: { max: 1000, timeWindowMs: 60_000 }, frontDoorKey: KEY };
  const deps = namespaceDeps({ store, config, now: () => T0 }, kubeCredentials, fake.factory);
  await createAccount(store, 'alice', false, T0);
  await store.createNamespace({ name: 'shop', owner: 'alice', personal: false });
  fake.deployments.set('shop', [
    { metadata: { name: 'web' }, spec: { replicas: 1 } },
    { metadata: { name: 'api' }, spec: { replicas: 2 } },
  ]);
  await sleepNamespace(deps, 'shop', 'alice');
  issued.length = 0;
  const app = await buildApp({ store, config, now: () => T0, logStream: false, kubeCredentials, ownerCluster: fake.factory });
  const ask = () =>
    app.inject({
      method: 'GET',
      url: WAKING_PATH,
      headers: { [FRONT_DOOR_KEY_HEADER]: KEY, [WAKE_NAMESPACE_HEADER]: 'shop', [WAKE_HOST_HEADER]: 'web-shop.devtool.test' },
    });
  const replicas = () => fake.deployments.get('shop')!.map((d) => d.spec.replicas);
  return { store, fake, deps, issued, app, ask, replicas };
}

test('a request wakes a sleeping namespace as its owner, once, and WAKING_SINCE goes as soon as its workloads are available', async () => {
  const h = await setup();
  assert.deepEqual(h.replicas(), [0, 0]);
  const answers = await Promise.all(Array.from({ length: 10 }, () => h.ask()));
  assert.deepEqual(
    answers.map((a) => a.statusCode),
    Array(10).fill(503),
  );
  await until(async () => (await h.store.getNamespace('shop'))?.marks?.wakingSince !== undefined, 'WAKING_SINCE set');
  assert.deepEqual(h.replicas(), [1, 2], 'the replicas from before the sleep');
  assert.equal((await h.store.getNamespace('shop'))?.marks?.sleepingSince, undefined);
  // One token of the owner for the wake and its follow, however many requests came.
  assert.deepEqual(h.issued, ['alice']);
  // While the workloads start, the page; no second wake.
  assert.equal((await h.ask()).statusCode, 503);
  h.fake.becomeAvailable('shop');
  await until(async () => (await h.store.getNamespace('shop'))?.marks?.wakingSince === undefined, 'WAKING_SINCE removed once available');
  assert.deepEqual(h.issued, ['alice']);
});

test('the waking page reads what a namespace does from its marks; a preview or an unknown namespace is not its', async () => {
  const h = await setup();
  const log = { warn: () => {} } as unknown as Parameters<typeof namespaceWaking>[1];
  const w = namespaceWaking(h.deps, log);
  assert.equal(await w.rest('shop'), 'sleeping');
  assert.equal(await w.rest('nothing'), undefined);
  await h.store.createNamespace({ name: 'pr-1', owner: 'alice', personal: false, preview: { pipeline: 'p' } } as never);
  assert.equal(await w.rest('pr-1'), undefined);
  await h.store.setNamespaceMarks('shop', { sleepingSince: null, wakingSince: T0.toISOString() });
  assert.equal(await w.rest('shop'), 'waking');
  await h.store.setNamespaceMarks('shop', { wakingSince: null });
  assert.equal(await w.rest('shop'), 'awake');
  assert.ok(w.wakes instanceof WakeOnce);
});
