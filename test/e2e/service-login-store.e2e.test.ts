/**
 * The login records of the service's Kubernetes store on the local cluster: grants (sessions,
 * codes, device codes) as Secrets whose fields change independently, single-use deletes that
 * exactly one of several concurrent callers wins, expired grants swept, and password hashes that
 * go with their account.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { KubeStore } from '../../server/store/kubernetes.ts';
import { ConflictError } from '../../server/store/store.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';

const run = randomBytes(3).toString('hex');
const serviceNs = `e2e-lstore-${run}`;
let core: k8s.CoreV1Api;
let store: KubeStore;

describe('login records in the Kubernetes store', () => {
  before(async () => {
    const { kubeconfigPath } = await ensureCluster();
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: serviceNs, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
    store = await KubeStore.create({ namespace: serviceNs, extraLabels: { [E2E_NAMESPACE_LABEL]: 'true' } }, kc);
  });

  after(async () => {
    await core?.deleteNamespace({ name: serviceNs }).catch(() => {});
  });

  test('a grant: created once, fields updated independently, deleted by exactly one of several concurrent callers', async () => {
    const grant = { kind: 'device' as const, id: 'BCDFGHJK', expiresAt: '2099-01-01T00:00:00.000Z', fields: { hash: 'h', status: 'pending', lastPoll: '0' } };
    await store.putGrant(grant);
    await assert.rejects(store.putGrant(grant), ConflictError);
    // A poll and an approval at once, as two replicas would: neither overwrites the other.
    await Promise.all([store.updateGrant('device', grant.id, { lastPoll: '123' }), store.updateGrant('device', grant.id, { status: 'approved' }, 'ann')]);
    assert.deepEqual(await store.getGrant('device', grant.id), { ...grant, user: 'ann', fields: { hash: 'h', status: 'approved', lastPoll: '123' } });
    const s = await core.readNamespacedSecret({ name: 'devtool-device-bcdfghjk', namespace: serviceNs });
    assert.equal(s.metadata?.labels?.['devtool.dev/kind'], 'device');
    const wins = await Promise.all(Array.from({ length: 5 }, () => store.deleteGrant('device', grant.id)));
    assert.equal(wins.filter(Boolean).length, 1, `one winner: ${wins}`);
    assert.equal(await store.getGrant('device', grant.id), undefined);
    assert.equal(await store.updateGrant('device', grant.id, { status: 'x' }), false);
  });

  test('expired grants are swept; live ones stay', async () => {
    await store.putGrant({ kind: 'session', id: `old${run}`, user: 'ann', expiresAt: '2000-01-01T00:00:00.000Z', fields: { hash: 'a' } });
    await store.putGrant({ kind: 'session', id: `new${run}`, user: 'ann', expiresAt: '2099-01-01T00:00:00.000Z', fields: { hash: 'b' } });
    assert.equal(await store.sweepExpiredGrants(new Date('2026-01-01T00:00:00Z')), 1);
    assert.equal(await store.getGrant('session', `old${run}`), undefined);
    assert.equal((await store.getGrant('session', `new${run}`))?.fields['hash'], 'b');
  });

  test('a password hash is kept with its account and removed with it', async () => {
    const user = `pw${run}`;
    await store.createUser({ name: user, admin: false });
    assert.equal(await store.getPasswordHash(user), undefined);
    await store.setPasswordHash(user, 'scrypt$1');
    await store.setPasswordHash(user, 'scrypt$2');
    assert.equal(await store.getPasswordHash(user), 'scrypt$2');
    await store.deleteUser(user);
    assert.equal(await store.getPasswordHash(user), undefined);
  });
});
