/** A preview's Redeploy on the dashboard through the app: its owner only, CSRF-checked, with the last deploy's parameters. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildApp } from '../app.ts';
import type { DashboardCluster } from '../dashboard/kube-cluster.ts';
import type { KubeTokenIssuer } from '../kube-credentials.ts';
import { fakeCluster } from '../pipelines/fake-cluster.ts';
import { MemoryStore } from '../store/memory.ts';
import { newToken } from '../tokens.ts';

const NOW = new Date('2026-12-02T12:00:00Z');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function harness() {
  const store = new MemoryStore();
  const fake = fakeCluster();
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
    config: { version: '9.9.9', publicUrl: 'https://devtool.example', rateLimit: { max: 1000, timeWindowMs: 60_000 }, runnerImage: 'runner:1' },
    now: () => NOW,
    logStream: false,
    kubeCredentials: { server: 'https://k8s.example:6443', certificateAuthority: 'CA', tokenSeconds: 3600, issuer },
    previewCluster: async () => ({ ...fake.cluster, ingressHosts: async () => [], scaleWorkloads: async () => 0 }),
    dashboardCluster,
  });

  /** A browser signed up as `name` (made admin when asked), and an API token of the same user. */
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
    const token = newToken(name, 'test', NOW);
    await store.addToken(token.record);
    return {
      get: (url: string) => app.inject({ method: 'GET', url, headers: { cookie: cookie() } }),
      post: (url: string, body: Record<string, string> = {}) =>
        app.inject({ method: 'POST', url, headers: { ...FORM, cookie: cookie() }, payload: new URLSearchParams({ csrf, ...body }).toString() }),
      /** `devtool preview deploy`: the API route with the user's token. */
      deploy: (body: Record<string, unknown>) =>
        app.inject({ method: 'POST', url: '/api/v1/previews', headers: { authorization: `Bearer ${token.token}` }, payload: body }),
    };
  };
  /** Ends every run still going as a success. */
  const endRuns = () => {
    for (const j of fake.jobs.values()) j.state = { state: 'succeeded' };
  };
  return { app, store, fake, browser, endRuns };
}

const DEPLOY = { variables: ['GREETING=hi'], timeoutSeconds: 300 };

describe('dashboard: redeploy a preview', () => {
  test('Redeploy shows for the owner only; it starts a run with the last deploy repository, branch, file and variables', async () => {
    const h = await harness();
    const ann = await h.browser('ann', false);
    const bob = await h.browser('bob', false);
    const root = await h.browser('root', true);
    const ops = await h.browser('ops', true);
    const first = {
      ...DEPLOY,
      name: 'shop-pr',
      scope: 'personal',
      repository: 'https://git.example/acme/shop.git',
      branch: 'feature',
      file: 'deploy/devtool.yml',
    };
    assert.equal((await ann.deploy(first)).statusCode, 202);
    assert.equal((await root.deploy({ ...DEPLOY, name: 'demo', scope: 'global', repository: 'https://git.example/acme/demo.git' })).statusCode, 202);
    h.endRuns();

    const redeploy = (name: string) => new RegExp(`action="/previews/${name}/redeploy">.*?<button aria-label="Redeploy ${name}">Redeploy</button>`);
    assert.match((await ann.get('/')).body, redeploy('shop-pr'));
    assert.match((await root.get('/')).body, redeploy('demo'));
    for (const other of [bob, ops]) {
      const home = (await other.get('/')).body;
      assert.match(home, /demo/, 'the global preview is listed');
      assert.doesNotMatch(home, /\/redeploy"/, 'without Redeploy');
    }

    const before = await h.store.runs.getRecord('shop-pr', 'shop');
    const done = await ann.post('/previews/shop-pr/redeploy', { back: '/namespaces/shop-pr' });
    assert.equal(done.statusCode, 303, done.body);
    assert.equal(done.headers.location, '/namespaces/shop-pr');
    const after = (await h.store.runs.getRecord('shop-pr', 'shop'))!.record;
    assert.notEqual(after.job, before!.record.job, 'a new run');
    assert.deepEqual(
      { status: after.status, action: after.action, repository: after.repository, branch: after.branch, file: after.file, actor: after.actor },
      { status: 'progressing', action: 'deploy', repository: first.repository, branch: 'feature', file: 'deploy/devtool.yml', actor: 'ann' },
    );
    assert.deepEqual(await h.store.runs.getVariables('shop-pr', 'shop'), ['GREETING=hi']);
    assert.deepEqual(h.fake.jobs.get(after.job)?.state, { state: 'running' }, "the redeploy's Job");
  });

  test("another user is refused with the rule's line, a forged form does nothing", async () => {
    const h = await harness();
    const ann = await h.browser('ann', false);
    const bob = await h.browser('bob', false);
    const root = await h.browser('root', true);
    const ops = await h.browser('ops', true);
    await ann.deploy({ ...DEPLOY, name: 'shop-pr', scope: 'personal', repository: 'https://git.example/acme/shop.git' });
    await root.deploy({ ...DEPLOY, name: 'demo', scope: 'global', repository: 'https://git.example/acme/demo.git' });
    h.endRuns();
    const job = async () => (await h.store.runs.getRecord('shop-pr', 'shop'))?.record.job;
    const before = await job();

    const admin = await ops.post('/previews/demo/redeploy');
    assert.equal(admin.statusCode, 403);
    assert.match(
      admin.body,
      /id="error">preview environment demo belongs to root: only root redeploys it \(destroy it and deploy it again to take it over\)\.<\/p>/,
    );
    const plain = await bob.post('/previews/demo/redeploy');
    assert.equal(plain.statusCode, 403);
    assert.match(plain.body, /id="error">only admins can deploy a global preview environment: deploy demo with --scope personal, or ask an admin\.<\/p>/);
    const personal = await bob.post('/previews/shop-pr/redeploy');
    assert.equal(personal.statusCode, 404);
    assert.match(personal.body, /id="error">no preview environment shop-pr\.<\/p>/);
    const forged = await ann.post('/previews/shop-pr/redeploy', { csrf: 'forged' });
    assert.equal(forged.statusCode, 403);
    assert.equal(await job(), before, 'no run started');
    assert.equal((await ann.post('/previews/shop-pr/redeploy')).statusCode, 303, 'the same form with its own token');
    assert.notEqual(await job(), before);
  });
});
