/**
 * The service's Kubernetes store on the local cluster: accounts as ServiceAccounts, tokens as
 * hashed Secrets, stored secrets, namespaces owned through a RoleBinding, and Kubernetes RBAC as
 * the isolation between two users (checked by acting as each user's ServiceAccount). Also the
 * operator command `create-user` of the built service program, and the API on this store.
 * Everything lives in throwaway namespaces labelled devtool.dev/e2e=true, deleted at the end.
 * It tests the store and the program themselves (objects read back, a service acting as a
 * least-rights identity made here), so it runs them on this machine rather than through the
 * chart's installation; the flows users see run there (installed-service.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { createAccount } from '../../server/accounts.ts';
import { buildApp } from '../../server/app.ts';
import { KubeStore, serviceAccountName } from '../../server/store/kubernetes.ts';
import { ConflictError } from '../../server/store/store.ts';
import { hashToken } from '../../server/tokens.ts';
import { ServiceClient } from '../../src/service/client.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';
import { createUser, serviceIdentity, startService } from './service.ts';

const run = randomBytes(3).toString('hex');
const serviceNs = `e2e-svc-${run}`;
const userA = `e2ea${run}`;
const userB = `e2eb${run}`;
const labels = { [E2E_NAMESPACE_LABEL]: 'true' };

let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let store: KubeStore;
let kubeconfigPath: string;
/** The service's least-rights identity (serviceIdentity()). */
let serviceKc: k8s.KubeConfig;
const tmp = mkdtempSync(join(tmpdir(), 'service-store-'));

async function serviceAccountToken(name: string): Promise<string> {
  const tr = await core.createNamespacedServiceAccountToken({ name, namespace: serviceNs, body: { spec: { audiences: [], expirationSeconds: 900 } } });
  return tr.status!.token;
}

function kubeconfigWithToken(user: string, token: string): k8s.KubeConfig {
  const cluster = kc.getCurrentCluster()!;
  const as = new k8s.KubeConfig();
  as.loadFromOptions({ clusters: [cluster], users: [{ name: user, token }], contexts: [{ name: user, cluster: cluster.name, user }], currentContext: user });
  return as;
}

/** A client acting as the user's ServiceAccount, with a short-lived token from a TokenRequest. */
async function actingAs(user: string): Promise<k8s.CoreV1Api> {
  return kubeconfigWithToken(user, await serviceAccountToken(serviceAccountName(user))).makeApiClient(k8s.CoreV1Api);
}

/** A pod that never runs (its image does not exist); retried while the namespace's default ServiceAccount is being made. */
async function createPod(namespace: string, name: string, finalizers?: string[]): Promise<void> {
  const body: k8s.V1Pod = {
    metadata: { name, ...(finalizers ? { finalizers } : {}) },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'localhost:5000/none:latest' }] },
  };
  for (let i = 0; ; i++) {
    try {
      await core.createNamespacedPod({ namespace, body });
      return;
    } catch (err) {
      if (i >= 50 || !String((err as { body?: unknown }).body).includes('serviceaccount')) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  }
}

describe('service store on Kubernetes', () => {
  before(async () => {
    kubeconfigPath = (await ensureCluster()).kubeconfigPath;
    kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: serviceNs, labels } } });
    // The store acts as the service would: a ServiceAccount with only the rights docs/service-design.md lists.
    serviceKc = await serviceIdentity(kc, serviceNs, labels);
    store = await KubeStore.create({ namespace: serviceNs, extraLabels: labels }, serviceKc);
  });

  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    if (!core) return;
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.deleteClusterRoleBinding({ name: serviceNs }).catch(() => {});
    await rbac.deleteClusterRole({ name: serviceNs }).catch(() => {});
    // By name too: every name holds `run`.
    const mine = await core.listNamespace();
    for (const ns of mine.items) {
      const name = ns.metadata!.name!;
      if (name.includes(run)) await core.deleteNamespace({ name }).catch(() => {});
    }
  });

  test('accounts: a ServiceAccount, a personal namespace the user owns, tokens kept as hashes', async () => {
    const a = await createAccount(store, userA, false, new Date());
    assert.equal(a.namespace, `${userA}-devtool`);
    assert.deepEqual(await store.getUser(userA), { name: userA, admin: false });
    await assert.rejects(createAccount(store, userA, false, new Date()), new RegExp(`user ${userA} already exists`));
    await assert.rejects(store.createUser({ name: userA, admin: true }), ConflictError);

    const found = await store.findToken(hashToken(a.token));
    assert.equal(found?.user, userA);
    // The token's Secret holds no token, only its hash.
    const secrets = await core.listNamespacedSecret({ namespace: serviceNs, labelSelector: `devtool.dev/kind=token,devtool.dev/user=${userA}` });
    assert.equal(secrets.items.length, 1);
    const stored = JSON.stringify(secrets.items[0]!.data);
    assert.ok(!stored.includes(Buffer.from(a.token).toString('base64')) && !stored.includes(a.token));

    const { createdAt, ...ns } = (await store.getNamespace(a.namespace)) ?? {};
    assert.deepEqual(ns, { name: a.namespace, owner: userA, personal: true, status: 'Active' });
    assert.ok(Math.abs(Date.parse(createdAt ?? '') - Date.now()) < 600_000, `created just now: ${createdAt}`);
    assert.ok(await store.deleteToken(userA, found!.id));
    assert.equal(await store.findToken(hashToken(a.token)), undefined);
    assert.equal(await store.deleteToken(userA, found!.id), false);
  });

  test('RBAC isolates users: B can neither list, read nor delete pods in A’s namespace; A can', async () => {
    await createAccount(store, userB, false, new Date());
    const nsA = `${userA}-devtool`;
    await createPod(nsA, 'probe');
    const asA = await actingAs(userA);
    const asB = await actingAs(userB);
    assert.equal(await statusOf(asA.listNamespacedPod({ namespace: nsA })), 200);
    assert.equal(await statusOf(asA.readNamespacedPod({ name: 'probe', namespace: nsA })), 200);
    assert.equal(await statusOf(asB.listNamespacedPod({ namespace: nsA })), 403);
    assert.equal(await statusOf(asB.readNamespacedPod({ name: 'probe', namespace: nsA })), 403);
    assert.equal(await statusOf(asB.deleteNamespacedPod({ name: 'probe', namespace: nsA })), 403);
    assert.equal(await statusOf(asB.deleteNamespace({ name: nsA })), 403);
    assert.equal(await statusOf(asB.listNamespacedSecret({ namespace: serviceNs })), 403, 'B cannot read the service’s accounts');
    assert.equal(await statusOf(asB.listNamespacedPod({ namespace: `${userB}-devtool` })), 200, 'B works in its own namespace');
    assert.equal(await statusOf(asA.deleteNamespacedPod({ name: 'probe', namespace: nsA })), 200);
  });

  test('namespaces: created, taken, listed with their status, Terminating once deleted', async () => {
    const shop = `shop-${run}`;
    const { createdAt: _, ...made } = await store.createNamespace({ name: shop, owner: userA, personal: false });
    assert.deepEqual(made, { name: shop, owner: userA, personal: false, status: 'Active' });
    await assert.rejects(store.createNamespace({ name: shop, owner: userB, personal: false }), ConflictError);
    assert.ok(await store.namespaceExists('kube-system'));
    assert.equal(await store.getNamespace('kube-system'), undefined, 'a namespace devtool does not manage is not a record');
    const asB = await actingAs(userB);
    assert.equal(await statusOf(asB.listNamespacedPod({ namespace: shop })), 403);

    // A pod with a finalizer keeps the namespace Terminating until the test removes it.
    await createPod(shop, 'slow', ['devtool.dev/e2e-hold']);
    await store.deleteNamespace(shop);
    const listed = await store.listNamespaces(userA);
    assert.deepEqual(
      listed.map((n) => [n.name, n.status]),
      [
        [`${userA}-devtool`, 'Active'],
        [shop, 'Terminating'],
      ],
    );
    await core.patchNamespacedPod(
      { name: 'slow', namespace: shop, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  });

  test('stored secrets: parallel writes all kept, names listed, values read back, deleted', async () => {
    await Promise.all([
      store.putSecret(userA, 'ONE', 'v1'),
      store.putSecret(userA, 'TWO', 'v2 with spaces\nand a line'),
      store.putSecret(userA, 'THREE', 'v3'),
    ]);
    assert.deepEqual(await store.secretNames(userA), ['ONE', 'THREE', 'TWO']);
    assert.deepEqual(await store.secretValues(userA), { ONE: 'v1', TWO: 'v2 with spaces\nand a line', THREE: 'v3' });
    assert.deepEqual(await store.secretValues(userB), {});
    assert.ok(await store.deleteSecret(userA, 'TWO'));
    assert.equal(await store.deleteSecret(userA, 'TWO'), false);
    assert.deepEqual(await store.secretNames(userA), ['ONE', 'THREE']);
  });

  test('the API on this store: me, namespace list, a taken name', async () => {
    const app = await buildApp({ store, config: { version: 't', rateLimit: { max: 100, timeWindowMs: 60_000 } }, logStream: false });
    const token = (await store.listTokens(userB)).length;
    assert.equal(token, 1);
    const c = await createAccount(store, `e2ec${run}`, true, new Date());
    const auth = { authorization: `Bearer ${c.token}` };
    const me = await app.inject({ method: 'GET', url: '/api/v1/me', headers: auth });
    assert.deepEqual(me.json(), { name: `e2ec${run}`, admin: true, namespace: `e2ec${run}-devtool` });
    // A namespace devtool did not make (this test's own) is taken; Kubernetes' own names are reserved.
    const taken = await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: auth, payload: { name: serviceNs } });
    assert.equal(taken.statusCode, 409);
    assert.deepEqual(taken.json(), { error: `namespace ${serviceNs} is taken: choose another name` });
    const reserved = await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: auth, payload: { name: 'kube-system' } });
    assert.equal(reserved.statusCode, 403);
    assert.match(reserved.json().error, /^namespace kube-system is reserved/);
    const list = await app.inject({ method: 'GET', url: '/api/v1/namespaces', headers: auth });
    assert.deepEqual(list.json(), { namespaces: [{ name: `e2ec${run}-devtool`, status: 'Active', owner: `e2ec${run}`, personal: true }] });
    await app.close();
  });

  test('create-user of the built service program prints a working token as its last line', async () => {
    const name = `e2ed${run}`;
    const env = { KUBECONFIG: kubeconfigPath, POD_NAMESPACE: serviceNs, DEVTOOL_OBJECT_LABELS: `${E2E_NAMESPACE_LABEL}=true` };
    const r = createUser(env, name, true);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.token, /^dvt_[A-Za-z0-9_-]{43}$/);
    const again = createUser(env, name);
    assert.equal(again.status, 1);
    assert.equal(again.stderr, `devtool-service: user ${name} already exists\n`);
    const bad = createUser(env, 'Bad_Name');
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr, `devtool-service: invalid user name "Bad_Name": lowercase letters, digits and '-', starting and ending with a letter or digit\n`);
    assert.equal((await store.findToken(hashToken(r.token)))?.user, name);
    const personal = await core.readNamespace({ name: `${name}-devtool` });
    assert.equal(personal.metadata?.labels?.[E2E_NAMESPACE_LABEL], 'true', 'DEVTOOL_OBJECT_LABELS labels what it makes');
  });

  test('serve of the built program: health, readiness and the API over HTTP, as the least-rights ServiceAccount', async () => {
    const kubeconfig = join(tmp, 'service.kubeconfig');
    writeFileSync(kubeconfig, serviceKc.exportConfig(), { mode: 0o600 });
    const ca = join(tmp, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n');
    const service = await startService({
      KUBECONFIG: kubeconfig,
      POD_NAMESPACE: serviceNs,
      DEVTOOL_OBJECT_LABELS: `${E2E_NAMESPACE_LABEL}=true`,
      DEVTOOL_PUBLIC_URL: 'https://devtool.e2e.example/',
      DEVTOOL_ENDPOINT_DOMAIN: 'e2e.example',
      DEVTOOL_REGISTRY: 'localhost:5000',
      DEVTOOL_CA_FILE: ca,
    });
    const { url } = service;
    try {
      const anonymous = new ServiceClient({ url });
      const info = await anonymous.call('info');
      assert.equal(info.endpointDomain, 'e2e.example');
      assert.equal(info.registry, 'localhost:5000');
      assert.match(info.certificate ?? '', /^-----BEGIN CERTIFICATE-----/);
      await assert.rejects(anonymous.call('me'), {
        message: 'missing API token (Authorization: Bearer): log in again with devtool context use https://devtool.e2e.example',
      });

      const e = await createAccount(store, `e2ee${run}`, false, new Date());
      const client = new ServiceClient({ url, token: e.token });
      assert.equal((await client.call('me')).namespace, `e2ee${run}-devtool`);
      const made = await client.call('createNamespace', { body: { name: `web-${run}` } });
      assert.equal(made.status, 'Active');
      // One's own name again: refused, saying it is already one's own (the CLI switches to it).
      await assert.rejects(client.call('createNamespace', { body: { name: `web-${run}` } }), {
        message: `namespace web-${run} already exists and is yours: devtool namespace use web-${run}`,
      });
      await client.call('putSecret', { params: { name: 'DB_PASSWORD' }, body: { value: 'e2e-secret-value' } });
      assert.deepEqual(await client.call('listSecrets'), { secrets: [{ name: 'DB_PASSWORD' }] });
      const extra = await client.call('createToken', { body: { name: 'e2e' } });
      await client.call('revokeToken', { params: { id: extra.id } });
      await assert.rejects(new ServiceClient({ url, token: extra.token }).call('me'), { status: 401 });
      await client.call('deleteNamespace', { params: { name: `web-${run}` } });
      const statuses = (await client.call('listNamespaces')).namespaces.map((n) => `${n.name} ${n.status}`);
      assert.ok(statuses.includes(`web-${run} Terminating`) || !statuses.some((s) => s.startsWith(`web-${run} `)), statuses.join(', '));

      const output = service.output();
      assert.ok(!output.includes(e.token) && !output.includes(extra.token) && !output.includes('e2e-secret-value'), 'no secret in the log');
      assert.match(output, /"url":"\/api\/v1\/me"/, 'requests are logged as JSON lines');
    } finally {
      assert.equal(await service.stop(), 0, 'SIGTERM stops it cleanly');
    }
  });
});
