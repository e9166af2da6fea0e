/** The admin page and the sleep and wake forms through the app: admins only, CSRF-checked, with the API routes' rules. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAccount } from '../accounts.ts';
import { buildApp } from '../app.ts';
import type { DashboardCluster } from '../dashboard/kube-cluster.ts';
import type { KubeTokenIssuer } from '../kube-credentials.ts';
import { fakeOwnerCluster } from '../namespaces/fake-owner-cluster.ts';
import { MemoryStore } from '../store/memory.ts';

const NOW = new Date('2026-12-02T12:00:00Z');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function harness() {
  const store = new MemoryStore();
  const fake = fakeOwnerCluster();
  const issuer: KubeTokenIssuer = { issue: async (user) => ({ token: `token-of-${user}`, expiresAt: '2027-01-01T00:00:00Z' }) };
  // Home reads nothing in the namespaces here: what runs shows as unknown.
  const dashboardCluster: DashboardCluster = {
    list: async () => 'forbidden',
    mayWatch: async () => false,
    watch: () => () => {},
    podLog: async () => 'forbidden',
  };
  const app = await buildApp({
    store,
    config: { version: '9.9.9', publicUrl: 'https://devtool.example', rateLimit: { max: 1000, timeWindowMs: 60_000 }, metricsToken: 'metrics-secret' },
    now: () => NOW,
    logStream: false,
    kubeCredentials: { server: 'https://k8s.example:6443', certificateAuthority: 'CA', tokenSeconds: 3600, issuer },
    ownerCluster: fake.factory,
    dashboardCluster,
  });
  const ann = await createAccount(store, 'ann', false, NOW);
  await store.createNamespace({ name: 'shop', owner: 'ann', personal: false });
  fake.deployments.set('shop', [{ metadata: { name: 'web' }, spec: { replicas: 2 } }]);

  /** A browser signed up as `name` (made admin when asked): its form posts with its own CSRF token. */
  const browser = async (name: string, admin: boolean) => {
    const jar: string[] = [];
    const keep = (set: string | string[] | undefined) => {
      for (const c of [set ?? []].flat()) jar.push(c.split(';')[0]!);
    };
    const cookie = () => jar.join('; ');
    const login = await app.inject({ method: 'GET', url: '/login' });
    keep(login.headers['set-cookie']);
    const csrf0 = /name="csrf" value="([^"]+)"/.exec(login.body)![1]!;
    const signup = await app.inject({
      method: 'POST',
      url: '/signup',
      headers: { ...FORM, cookie: cookie() },
      payload: new URLSearchParams({ csrf: csrf0, name, password: 'correct horse', password2: 'correct horse' }).toString(),
    });
    keep(signup.headers['set-cookie']);
    if (admin) await store.setUserAdmin(name, true);
    const home = await app.inject({ method: 'GET', url: '/', headers: { cookie: cookie() } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(home.body)![1]!;
    return {
      csrf,
      get: (url: string) => app.inject({ method: 'GET', url, headers: { cookie: cookie() } }),
      post: (url: string, body: Record<string, string> = {}) =>
        app.inject({ method: 'POST', url, headers: { ...FORM, cookie: cookie() }, payload: new URLSearchParams({ csrf, ...body }).toString() }),
    };
  };
  return { app, store, fake, ann, browser };
}

describe('admin page', () => {
  test('a plain user: 403 with one line at /admin and at every form, nothing done, no Admin in the navigation', async () => {
    const h = await harness();
    const dan = await h.browser('dan', false);
    const page = await dan.get('/admin');
    assert.equal(page.statusCode, 403);
    assert.match(page.body, /<p class="error" role="alert" id="error">Only admins can use the admin page\.<\/p>/);
    assert.doesNotMatch((await dan.get('/')).body, /href="\/admin"/);
    const forged: [string, Record<string, string>][] = [
      ['/admin/users', { name: 'eve', admin: 'true' }],
      ['/admin/users/ann/admin', { admin: 'true' }],
      ['/admin/users/ann/disable', {}],
      ['/admin/users/ann/delete', {}],
      ['/admin/namespaces/shop/sleep', {}],
      ['/admin/namespaces/shop/delete', {}],
    ];
    for (const [url, body] of forged) {
      const res = await dan.post(url, body);
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /Only admins can use the admin page\./, url);
    }
    assert.equal((await dan.get('/admin/users/ann/delete')).statusCode, 403);
    assert.equal(await h.store.getUser('eve'), undefined);
    const ann = await h.store.getUser('ann');
    assert.deepEqual([ann?.admin, ann?.disabled === true], [false, false]);
    assert.equal((await h.store.getNamespace('shop'))?.status, 'Active');
    assert.equal((await h.store.getNamespace('shop'))?.marks?.sleepingSince, undefined);
    // The owner's form on another's namespace: the API's refusal, in one line.
    const other = await dan.post('/namespaces/shop/sleep');
    assert.equal(other.statusCode, 403);
    assert.match(other.body, /namespace shop: only its owner \(ann\) or an admin can put it to sleep\./);
    assert.equal((await h.store.getNamespace('shop'))?.marks?.sleepingSince, undefined);
  });

  test('the navigation is the same on every signed-in page: Admin for an admin, never for a plain user', async () => {
    const h = await harness();
    const root = await h.browser('root', true);
    const dan = await h.browser('dan', false);
    const ADMIN = '<li><a href="/admin">Admin</a></li>';
    // The account pages, the device code, and the namespace's logs and run pages (here their 404s: the fake cluster shows nothing).
    for (const url of [
      '/',
      '/account/tokens',
      '/account/secrets',
      '/device',
      '/namespaces/shop',
      '/namespaces/shop/logs/deployments/web',
      '/namespaces/shop/pipelines/web',
    ]) {
      const admin = await root.get(url);
      assert.match(admin.body, /<nav aria-label="Main">/, url);
      assert.ok(admin.body.includes(ADMIN), `${url} lists Admin for an admin`);
      const plain = await dan.get(url);
      assert.match(plain.body, /<nav aria-label="Main">/, url);
      assert.doesNotMatch(plain.body, /href="\/admin"/, `${url} has no Admin for a plain user`);
    }
  });

  test('an admin: users, namespaces and settings; creates a user whose token works; makes it admin and back; disables; deletes after confirming', async () => {
    const h = await harness();
    const root = await h.browser('root', true);
    const page = await root.get('/admin');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<a href="\/admin" aria-current="page">Admin<\/a>/);
    assert.match(page.body, /<tr data-user="ann">/);
    assert.match(page.body, /<tr data-namespace="shop">/);
    assert.match(page.body, /<b>Metrics token<\/b><\/td><td data-label="Value">set<\/td>/);
    assert.doesNotMatch(page.body, /metrics-secret/);
    assert.match((await root.get('/')).body, /<li><a href="\/admin">Admin<\/a><\/li>/);

    assert.equal((await root.post('/admin/users', { csrf: 'forged', name: 'eve' })).statusCode, 403, 'a forged CSRF token');
    const made = await root.post('/admin/users', { name: 'cat' });
    assert.equal(made.statusCode, 201);
    const token = /<code id="new-token" class="secret">([^<]+)<\/code>/.exec(made.body)![1]!;
    assert.match(made.body, /devtool context use https:\/\/devtool.example --token /);
    const me = await h.app.inject({ method: 'GET', url: '/api/v1/namespaces', headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.statusCode, 200);
    assert.match(me.body, /cat-devtool/);
    const again = await root.post('/admin/users', { name: 'cat' });
    assert.equal(again.statusCode, 409);

    assert.equal((await root.post('/admin/users/cat/admin', { admin: 'true' })).statusCode, 303);
    assert.equal((await h.store.getUser('cat'))?.admin, true);
    assert.equal((await root.post('/admin/users/cat/admin', { admin: 'false' })).statusCode, 303);
    assert.equal((await h.store.getUser('cat'))?.admin, false);
    const self = await root.post('/admin/users/root/admin', { admin: 'false' });
    assert.equal(self.statusCode, 409);
    assert.match(self.body, /you cannot make or unmake admin your own account: ask another admin\./);
    assert.equal((await root.post('/admin/users/cat/disable')).statusCode, 303);
    assert.equal((await h.store.getUser('cat'))?.disabled, true);
    assert.equal((await root.post('/admin/users/cat/enable')).statusCode, 303);
    assert.equal((await h.store.getUser('cat'))?.disabled === true, false);

    const confirm = await root.get('/admin/users/ann/delete');
    assert.match(confirm.body, /<ul id="doomed"><li><code>ann-devtool<\/code><\/li><li><code>shop<\/code><\/li><\/ul>/);
    assert.equal(await h.store.getUser('ann').then((u) => u?.name), 'ann', 'the confirmation deletes nothing');
    assert.equal((await root.post('/admin/users/ann/delete')).statusCode, 303);
    assert.equal(await h.store.getUser('ann'), undefined);
    assert.equal((await h.store.getNamespace('shop'))?.status, 'Terminating');
  });

  test("an admin sleeps and wakes another user's namespace; the owner does the same from Home", async () => {
    const h = await harness();
    const root = await h.browser('root', true);
    assert.equal((await root.post('/admin/namespaces/shop/sleep')).statusCode, 303);
    assert.equal((await h.store.getNamespace('shop'))?.marks?.sleptBy, 'root');
    assert.match((await root.get('/admin')).body, /action="\/admin\/namespaces\/shop\/wake"/);
    assert.equal((await root.post('/admin/namespaces/shop/wake')).statusCode, 303);
    assert.equal((await h.store.getNamespace('shop'))?.marks?.sleepingSince, undefined);

    const owner = await h.browser('ted', false);
    await h.store.createNamespace({ name: 'teds', owner: 'ted', personal: false });
    const slept = await owner.post('/namespaces/teds/sleep', { back: '/namespaces/teds' });
    assert.equal(slept.statusCode, 303);
    assert.equal(slept.headers.location, '/namespaces/teds');
    assert.match(
      (await owner.get('/')).body,
      /<td data-label="Status">Sleeping since 2026-12-02 12:00 UTC \(by ted\)<\/td>.*action="\/namespaces\/teds\/wake"/s,
    );
    const elsewhere = await owner.post('/namespaces/teds/wake', { back: '//evil.example/' });
    assert.equal(elsewhere.headers.location, '/', 'never sent to another site');
    assert.equal((await h.store.getNamespace('teds'))?.marks?.sleepingSince, undefined);
  });
});
