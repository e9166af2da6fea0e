/** The dashboard's pages and live stream through the app, with the in-memory store and an in-memory cluster. */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { createAccount } from '../accounts.ts';
import { buildApp, type ServiceConfig } from '../app.ts';
import type { DashboardCluster } from '../dashboard/kube-cluster.ts';
import { ownerGone, type WatchSink } from '../dashboard/hub.ts';
import { KINDS, type Kind } from '../dashboard/model.ts';
import { MemoryStore } from '../store/memory.ts';
import { newToken } from '../tokens.ts';

const CONFIG: ServiceConfig = { version: '9.9.9', publicUrl: 'https://devtool.example', rateLimit: { max: 1000, timeWindowMs: 60_000 } };

const pod = (name: string, app: string, ready = true, instance = `cid-${name}`) => ({
  metadata: { name, labels: { app } },
  spec: { containers: [{ name: 'main' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'main', containerID: instance, ready, restartCount: 0 }] },
});
const deployment = (name: string) => ({
  metadata: { name, labels: { 'devtool.dev/environment': 'shop' } },
  spec: { replicas: 1, selector: { matchLabels: { app: name } } },
  status: { readyReplicas: 1 },
});
const record = (name: string) => ({
  metadata: { name: `devtool-env-${name}`, labels: { 'devtool.dev/environment-state': name } },
  data: { name, status: 'deployed', source: 'compose', updated: '2026-12-02T10:00:00Z' },
});

/** Objects per namespace and kind; who may read which namespace (owners and the users given). */
function fakeCluster(store: MemoryStore) {
  const objects = new Map<string, unknown[]>();
  const readers = new Map<string, Set<string>>();
  const sinks = new Map<string, WatchSink>();
  /** Owners whose watches give up at once, as for an account that is gone. */
  const gone = new Set<string>();
  const may = async (user: string, namespace: string) => (await store.getNamespace(namespace))?.owner === user || (readers.get(namespace)?.has(user) ?? false);
  const cluster: DashboardCluster = {
    async list(user, namespace, kind) {
      return (await may(user, namespace)) ? (objects.get(`${namespace}/${kind}`) ?? []) : 'forbidden';
    },
    mayWatch: (user, namespace) => may(user, namespace),
    watch(owner, namespace, kind, sink) {
      if (gone.has(owner)) {
        queueMicrotask(() => sink.fail(ownerGone(owner)));
        return () => undefined;
      }
      sinks.set(`${namespace}/${kind}`, sink);
      queueMicrotask(() => sink.reset(objects.get(`${namespace}/${kind}`) ?? []));
      return () => sinks.delete(`${namespace}/${kind}`);
    },
    podLog: async () => 'unavailable',
  };
  const set = (namespace: string, kind: Kind, list: unknown[]) => objects.set(`${namespace}/${kind}`, list);
  /** Each container's log lines so far, and the followers waiting for more. */
  const logs = new Map<string, string[]>();
  const followers = new Map<string, Set<{ line: (raw: string) => void; end: () => void }>>();
  const print = (namespace: string, podName: string, raw: string) => {
    const key = `${namespace}/${podName}/main`;
    logs.set(key, [...(logs.get(key) ?? []), raw]);
    for (const f of followers.get(key) ?? []) f.line(raw);
  };
  /** The container exits: its followers' streams end, and its next instance's log starts empty. */
  const restart = (namespace: string, podName: string) => {
    const key = `${namespace}/${podName}/main`;
    logs.delete(key);
    for (const f of followers.get(key) ?? []) f.end();
  };
  cluster.podLog = async (user, namespace, at, line, signal) => {
    if (!(await may(user, namespace))) return 'forbidden';
    const key = `${namespace}/${at.pod}/${at.container}`;
    for (const raw of (logs.get(key) ?? []).slice(-at.tail)) line(raw);
    if (!at.follow) return 'ended';
    const mine = followers.get(key) ?? new Set();
    const follower = { line, end: () => undefined as void };
    followers.set(key, mine.add(follower));
    await new Promise<void>((r) => {
      follower.end = r;
      signal.addEventListener('abort', () => r());
    });
    mine.delete(follower);
    return 'ended';
  };
  const following = () => [...followers.values()].reduce((n, f) => n + f.size, 0);
  return { cluster, set, sinks, readers, gone, print, restart, following };
}

async function harness() {
  const store = new MemoryStore();
  const now = new Date('2026-12-02T12:00:00Z');
  const ann = await createAccount(store, 'ann', false, now);
  const bob = await createAccount(store, 'bob', false, now);
  await store.createNamespace({ name: 'shop', owner: 'ann', personal: false });
  const fake = fakeCluster(store);
  fake.set('shop', 'pods', [pod('web-1', 'web')]);
  fake.set('shop', 'deployments', [deployment('web')]);
  fake.set('shop', 'environments', [record('shop')]);
  const app = await buildApp({ store, config: CONFIG, now: () => now, logStream: false, dashboardCluster: fake.cluster, dashboardRecheckMs: 50 });
  const as = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'text/html' });
  return { app, store, fake, ann, bob, as };
}

/** The events of a live stream until `until` says enough (or a timeout). */
async function events(url: string, headers: Record<string, string>, until: (seen: { event: string; data: string }[]) => boolean, act?: () => void) {
  return new Promise<{ status: number; seen: { event: string; data: string }[] }>((resolve, reject) => {
    const seen: { event: string; data: string }[] = [];
    const req = get(url, { headers }, (res) => {
      let buffer = '';
      const done = () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, seen });
      };
      if (res.statusCode !== 200) return done();
      res.on('data', (c: Buffer) => {
        buffer += c.toString();
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data !== undefined) {
            seen.push({ event, data });
            if (seen.length === 1) act?.();
          }
          if (until(seen)) return done();
        }
      });
      res.on('end', done);
    });
    req.on('error', reject);
    setTimeout(() => {
      req.destroy(); // else the app's close waits for the stream
      reject(new Error(`no end after 5 s: ${JSON.stringify(seen)}`));
    }, 5000).unref();
  });
}

describe('dashboard pages', () => {
  test('Home for an API token: own namespaces with what runs there; no forms without a session', async () => {
    const h = await harness();
    const res = await h.app.inject({ method: 'GET', url: '/', headers: h.as(h.ann.token) });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-security-policy'] as string, /default-src 'none'/);
    assert.match(res.body, /<tr data-namespace="shop"><td data-label="Namespace"><a href="\/namespaces\/shop">shop<\/a><\/td>/);
    assert.match(res.body, /<td data-label="Running">1 environment, <span class="">1\/1 pods ready<\/span><\/td>/);
    assert.match(res.body, /data-namespace="ann-devtool"/);
    assert.doesNotMatch(res.body, /<form/, 'a token renders read only');
    await h.store.setNamespaceMarks('shop', { sleepingSince: '2026-12-02T10:00:00Z', sleptBy: 'ann', lastRequest: '2026-12-02T09:58:00Z' });
    const asleep = await h.app.inject({ method: 'GET', url: '/', headers: h.as(h.ann.token) });
    assert.match(asleep.body, /<td data-label="Status">Sleeping since 2026-12-02 10:00 UTC \(by ann\)<\/td>/);
    // The latest of its marks and its creation (the memory store's clock): a time, not unknown.
    assert.match(asleep.body, /<tr data-namespace="shop">.*?<td data-label="Last activity">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/td>/s);
    const bobs = await h.app.inject({ method: 'GET', url: '/', headers: h.as(h.bob.token) });
    assert.doesNotMatch(bobs.body, /shop/, "bob sees none of ann's namespaces");
    await h.store.createNamespace({
      name: 'ann-prev',
      owner: 'ann',
      personal: false,
      preview: { scope: 'global', pipeline: 'p', deployedAt: '2026-12-02T10:00:00Z' },
    });
    const own = await h.app.inject({ method: 'GET', url: '/', headers: h.as(h.ann.token) });
    assert.equal(own.body.match(/data-namespace="ann-prev"/g)?.length, 1, "one's own global preview once, among one's namespaces");
  });

  test("the namespace page: ann's environments and workloads; bob gets one line and no data", async () => {
    const h = await harness();
    const res = await h.app.inject({ method: 'GET', url: '/namespaces/shop', headers: h.as(h.ann.token) });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-security-policy'] as string, /script-src 'self'; connect-src 'self'/);
    assert.match(res.body, /<script src="\/assets\/live-[0-9a-f]{12}\.js" defer><\/script>/);
    assert.match(res.body, /<tr data-environment="shop"><td data-label="Environment">shop<\/td><td data-label="Source">Compose<\/td>/);
    assert.match(res.body, /<li data-pod="web-1"><code>web-1<\/code>: <span class="ok" data-status>Running, ready<\/span><\/li>/);
    for (const url of ['/namespaces/shop', '/namespaces/nope', '/namespaces/shop/events']) {
      const refused = await h.app.inject({ method: 'GET', url, headers: h.as(h.bob.token) });
      assert.equal(refused.statusCode, 404, url);
      assert.match(refused.body, /There is no namespace (shop|nope) that you can see\./);
      assert.doesNotMatch(refused.body, /web-1|devtool-env|Compose/, 'no data');
    }
  });

  test('the live script is served with the page policy allowing it, and no page has inline script', async () => {
    const h = await harness();
    const page = await h.app.inject({ method: 'GET', url: '/namespaces/shop', headers: h.as(h.ann.token) });
    const src = /<script src="([^"]+)"/.exec(page.body)![1]!;
    const js = await h.app.inject({ method: 'GET', url: src });
    assert.equal(js.statusCode, 200);
    assert.match(js.headers['content-type'] as string, /^text\/javascript/);
    assert.match(js.body, /new EventSource/);
    assert.doesNotMatch(page.body, /<script>|<script [^s]|\son[a-z]+="/, 'no inline script or handler');
  });

  test('create and delete forms: CSRF-checked, with the API rules', async () => {
    const h = await harness();
    const jar: string[] = [];
    const login = await h.app.inject({ method: 'GET', url: '/login' });
    const cookie = () => jar.join('; ');
    const keep = (set: string | string[] | undefined) => {
      for (const c of [set ?? []].flat()) jar.push(c.split(';')[0]!);
    };
    keep(login.headers['set-cookie']);
    // Sign in as a user with a password: sign up cam.
    const csrf0 = /name="csrf" value="([^"]+)"/.exec(login.body)![1]!;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const signup = await h.app.inject({
      method: 'POST',
      url: '/signup',
      headers: { ...form, cookie: cookie() },
      payload: new URLSearchParams({ csrf: csrf0, name: 'cam', password: 'correct horse', password2: 'correct horse' }).toString(),
    });
    keep(signup.headers['set-cookie']);
    const home = await h.app.inject({ method: 'GET', url: '/', headers: { cookie: cookie() } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(home.body)![1]!;
    const post = (url: string, body: Record<string, string>) =>
      h.app.inject({ method: 'POST', url, headers: { ...form, cookie: cookie() }, payload: new URLSearchParams(body).toString() });

    assert.equal((await post('/namespaces', { csrf: 'forged', name: 'cam-app' })).statusCode, 403);
    assert.equal(await h.store.getNamespace('cam-app'), undefined, 'nothing done on a forged form');
    const made = await post('/namespaces', { csrf, name: 'cam-app' });
    assert.equal(made.statusCode, 303);
    assert.equal((await h.store.getNamespace('cam-app'))?.owner, 'cam');
    const taken = await post('/namespaces', { csrf, name: 'shop' });
    assert.equal(taken.statusCode, 409);
    assert.match(taken.body, /<p class="error" role="alert" id="error">namespace shop is taken: choose another name\.<\/p>/);
    const personal = await post('/namespaces/cam-devtool/delete', { csrf });
    assert.equal(personal.statusCode, 403);
    const others = await post('/namespaces/shop/delete', { csrf });
    assert.match(others.body, /only its owner \(ann\) or an admin can delete it/);
    assert.equal((await post('/namespaces/cam-app/delete', { csrf })).statusCode, 303);
    assert.equal((await h.store.getNamespace('cam-app'))?.status, 'Terminating');
  });

  test('the live stream sends every section, then a change of a pod as it happens', async () => {
    const h = await harness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/namespaces/shop/events`;
      const { status, seen } = await events(
        url,
        h.as(h.ann.token),
        (s) => s.some((e) => e.data.includes('web-2')),
        () => setTimeout(() => h.fake.sinks.get('shop/pods')!.put(pod('web-2', 'web', false)), 50),
      );
      assert.equal(status, 200);
      const sections = seen.filter((e) => e.event === 'section').map((e) => JSON.parse(e.data) as { id: string; html: string });
      assert.deepEqual(
        [...new Set(sections.map((s) => s.id))].sort(),
        ['environments', 'ns-actions', 'ns-state', 'pipelines', 'sessions', 'workloads'],
        'every section at first, once each kind and the namespace are listed',
      );
      assert.match(sections.at(-1)!.html, /<li data-pod="web-2"><code>web-2<\/code>: <span class="bad" data-status>Running<\/span><\/li>/);
      assert.deepEqual([...h.fake.sinks.keys()].sort(), KINDS.map((k) => `shop/${k}`).sort(), 'one watch per kind');
    } finally {
      await h.app.close();
    }
  });

  test("Home live: a namespace made, put to sleep and its pods changing show; another user's private namespace never reaches the stream", async () => {
    const h = await harness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/events`;
      const { status, seen } = await events(
        url,
        h.as(h.ann.token),
        (s) => s.some((e) => /data-namespace=\\"ann-new\\".*Sleeping since/.test(e.data)) && s.some((e) => e.data.includes('1/2 pods ready')),
        () =>
          setTimeout(async () => {
            await h.store.createNamespace({ name: 'bob-secret', owner: 'bob', personal: false });
            await h.store.createNamespace({ name: 'ann-new', owner: 'ann', personal: false });
            await h.store.setNamespaceMarks('ann-new', { sleepingSince: '2026-12-02T11:00:00Z', sleptBy: 'cli' });
            h.fake.sinks.get('shop/pods')!.put(pod('web-2', 'web', false));
          }, 20),
      );
      assert.equal(status, 200);
      const first = JSON.parse(seen[0]!.data) as { id: string; html: string };
      assert.equal(first.id, 'namespaces');
      assert.match(first.html, /<tr data-namespace="shop">.*1 environment, <span class="">1\/1 pods ready<\/span>/s, 'the counts from the shared watches');
      assert.ok(!seen.some((e) => e.data.includes('bob-secret')), "nothing of bob's private namespace");
      const last = JSON.parse(seen.filter((e) => e.event === 'section').at(-1)!.data) as { id: string; html: string };
      assert.match(last.html, /Sleeping since 2026-12-02 11:00 UTC \(by cli\)/);
      assert.doesNotMatch(last.html, /<form/, 'an API token reads only, live too');
    } finally {
      await h.app.close();
    }
  });

  test("the namespace page's status line and pipeline runs are live: a sleep from elsewhere, a new run", async () => {
    const h = await harness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/namespaces/shop/events`;
      const run = { name: 'shop', namespace: 'shop', status: 'progressing', action: 'deploy', repository: 'https://git.example/shop.git' };
      const { seen } = await events(
        url,
        h.as(h.ann.token),
        (s) => s.some((e) => e.data.includes('Sleeping since')) && s.some((e) => e.data.includes('data-run=\\"shop\\"')),
        () =>
          setTimeout(async () => {
            await h.store.setNamespaceMarks('shop', { sleepingSince: '2026-12-02T11:30:00Z', sleptBy: 'ann' });
            const at = '2026-12-02T11:59:00Z';
            await h.store.runs.putRecord({ ...run, job: 'devtool-run-shop-1', runId: '1', startedAt: at } as never, undefined, {});
            h.fake.sinks.get('shop/pods')!.put(pod('devtool-run-shop-1', 'runner'));
          }, 20),
      );
      const sections = seen.filter((e) => e.event === 'section').map((e) => JSON.parse(e.data) as { id: string; html: string });
      const lastOf = (id: string) => sections.filter((s) => s.id === id).at(-1)!.html;
      assert.match(lastOf('ns-state'), /^status <span id="ns-status">Sleeping since 2026-12-02 11:30 UTC \(by ann\)<\/span>/);
      assert.match(lastOf('pipelines'), /<tr data-run="shop">.*progressing/s);
    } finally {
      await h.app.close();
    }
  });

  test("a namespace whose owner's account is gone: the page says live updates stopped and why; its stream ends so, once", async () => {
    const h = await harness();
    await h.store.createNamespace({
      name: 'left',
      owner: 'cid',
      personal: false,
      preview: { scope: 'global', pipeline: 'left', deployedAt: '2026-12-02T10:00:00Z' },
    });
    h.fake.readers.set('left', new Set(['ann']));
    const why = "live updates stopped: the namespace's owner cid has no account any more";
    const shown = why.replace("'", '&#39;');
    const res = await h.app.inject({ method: 'GET', url: '/namespaces/left', headers: h.as(h.ann.token) });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, new RegExp(`<span id="live-status" role="status" class="muted">Not live: ${shown}</span>`));
    assert.doesNotMatch(res.body, /data-live/, 'no stream opened for nothing');
    h.fake.gone.add('cid');
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/namespaces/left/events`;
      const { status, seen } = await events(url, h.as(h.ann.token), (s) => s.some((e) => e.event === 'end'));
      assert.equal(status, 200);
      assert.deepEqual(seen, [{ event: 'end', data: why }]);
    } finally {
      await h.app.close();
    }
  });

  test('a live page whose rights go is told and ended, and gets nothing more', async () => {
    const h = await harness();
    h.fake.readers.set('shop', new Set(['bob']));
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/namespaces/shop/events`;
      const { seen } = await events(
        url,
        h.as(h.bob.token),
        (s) => s.some((e) => e.event === 'end'),
        () => h.fake.readers.set('shop', new Set()),
      );
      assert.deepEqual(seen.at(-1), { event: 'end', data: 'your rights in this namespace changed' });
    } finally {
      await h.app.close();
    }
  });

  test("without users' cluster credentials: Home lists names, a namespace page says why it cannot show one", async () => {
    const store = new MemoryStore();
    const ann = await createAccount(store, 'ann', false, new Date('2026-12-02T12:00:00Z'));
    const app = await buildApp({ store, config: CONFIG, logStream: false });
    const headers = { authorization: `Bearer ${ann.token}`, accept: 'text/html' };
    const home = await app.inject({ method: 'GET', url: '/', headers });
    assert.equal(home.statusCode, 200);
    assert.match(home.body, /<td data-label="Running" class="muted">unknown<\/td>/);
    for (const url of ['/namespaces/ann-devtool', '/namespaces/ann-devtool/events']) {
      const res = await app.inject({ method: 'GET', url, headers });
      assert.equal(res.statusCode, 503, url);
      assert.match(res.body, /hands out no Kubernetes credentials/);
    }
  });

  test("a pipeline run's token and a revoked token get no page", async () => {
    const h = await harness();
    const refused = await h.app.inject({ method: 'GET', url: '/', headers: h.as('dvt_not-a-token') });
    assert.equal(refused.statusCode, 401);
    assert.doesNotMatch(refused.body, /shop/);
    const made = newToken('ann', 'run', new Date('2026-12-02T12:00:00Z'));
    await h.store.addToken({ ...made.record, scope: 'run' });
    const run = await h.app.inject({ method: 'GET', url: '/namespaces/shop', headers: h.as(made.token) });
    assert.equal(run.statusCode, 403);
    assert.match(run.body, /a pipeline run&#39;s token cannot open the dashboard: use your own token/);
    assert.doesNotMatch(run.body, /web-1/);
  });

  test("a workload's logs: its pods' last lines for the owner, the namespace's 404 line for another user", async () => {
    const h = await harness();
    h.fake.print('shop', 'web-1', '2026-12-02T11:00:01Z hello <b>');
    const page = await h.app.inject({ method: 'GET', url: '/namespaces/shop/logs/deployments/web', headers: h.as(h.ann.token) });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<span class="line"><span class="src">web-1\/main<\/span> hello &lt;b&gt;\n<\/span>/);
    assert.match(page.headers['content-security-policy'] as string, /script-src 'self'/);
    for (const url of ['/namespaces/shop/logs/deployments/web', '/namespaces/shop/logs/deployments/web/events', '/namespaces/shop/pipelines/shop']) {
      const other = await h.app.inject({ method: 'GET', url, headers: h.as(h.bob.token) });
      assert.equal(other.statusCode, url.includes('pipelines') ? 503 : 404, url);
      if (!url.includes('pipelines')) assert.match(other.body, /There is no namespace shop that you can see\./);
      assert.doesNotMatch(other.body, /hello/);
    }
    const missing = await h.app.inject({ method: 'GET', url: '/namespaces/shop/logs/deployments/nope', headers: h.as(h.ann.token) });
    assert.equal(missing.statusCode, 404);
    assert.match(missing.body, /There is no Deployment nope in namespace shop\./);
    const kind = await h.app.inject({ method: 'GET', url: '/namespaces/shop/logs/jobs/web', headers: h.as(h.ann.token) });
    assert.equal(kind.statusCode, 404);
  });

  test("the logs' stream: the tail again as a section, a new line appended, a restarted pod's lines picked up", async () => {
    const h = await harness();
    h.fake.print('shop', 'web-1', '2026-12-02T11:00:01Z first');
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/namespaces/shop/logs/deployments/web/events`;
      const { status, seen } = await events(
        url,
        h.as(h.ann.token),
        (s) => s.some((e) => e.data.includes('restarted')),
        () => {
          setTimeout(() => h.fake.print('shop', 'web-1', '2026-12-02T11:00:02Z second'), 100);
          setTimeout(() => {
            h.fake.restart('shop', 'web-1');
            h.fake.sinks.get('shop/pods')!.put(pod('web-1', 'web', true, 'cid-again'));
          }, 200);
          setTimeout(() => h.fake.print('shop', 'web-1', '2026-12-02T11:00:03Z restarted'), 300);
        },
      );
      assert.equal(status, 200);
      const [head, ...rest] = seen.map((e) => ({ event: e.event, ...(JSON.parse(e.data) as { id: string; html: string }) }));
      assert.deepEqual(head, { event: 'section', id: 'log', html: '<span class="line"><span class="src">web-1/main</span> first\n</span>' });
      assert.ok(rest.every((e) => e.event === 'append' && e.id === 'log'));
      assert.match(rest[0]!.html, /second/);
      assert.match(rest.at(-1)!.html, /restarted/);
      assert.doesNotMatch(rest.map((e) => e.html).join(''), /first/, 'nothing twice');
      // The page gone (the request closed): its log streams and its watches end.
      for (let i = 0; i < 200 && (h.fake.following() > 0 || h.fake.sinks.size > 0); i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(h.fake.following(), 0, 'no log stream left open');
      assert.equal(h.fake.sinks.size, 0, 'no watch left open');
    } finally {
      await h.app.close();
    }
  });

  test("a run's page: on the namespace page; its lines live, then its status; the 404 line for a user without rights", async () => {
    const store = new MemoryStore();
    const now = new Date('2026-12-02T12:00:00Z');
    const ann = await createAccount(store, 'ann', false, now);
    const bob = await createAccount(store, 'bob', false, now);
    await store.createNamespace({ name: 'shop', owner: 'ann', personal: false });
    const fake = fakeCluster(store);
    await store.runs.putRecord(
      {
        name: 'web',
        namespace: 'shop',
        status: 'progressing',
        action: 'deploy',
        repository: 'https://git.example/web.git',
        job: 'run-web-1',
        runId: '1',
        startedAt: '2026-12-02T11:59:00Z',
      },
      undefined,
      {},
    );
    /** The runner's output so far and whether it ended; the follow writes each line the test prints. */
    let ended = false;
    const printed: string[] = [];
    let out: import('node:stream').Writable | undefined;
    const runner = {
      print(line: string) {
        printed.push(line);
        out?.write(`${line}\n`);
      },
      end() {
        ended = true;
        out?.end();
      },
    };
    const source = {
      server: 'https://kube.example',
      certificateAuthority: 'CA',
      tokenSeconds: 600,
      issuer: { issue: async (user: string) => ({ token: `tok-${user}`, expiresAt: '2026-12-02T13:00:00Z' }) },
    };
    const app = await buildApp({
      store,
      config: { ...CONFIG, runnerImage: 'runner:1' },
      now: () => now,
      logStream: false,
      dashboardCluster: fake.cluster,
      kubeCredentials: source,
      pipelineCluster: async (token) => ({
        access: async () => (token === 'tok-ann' ? 'run' : 'none'),
        createRun: async () => undefined,
        jobState: async () => (ended ? { state: 'succeeded' } : { state: 'running' }),
        deleteJob: async () => undefined,
        logOf: async () => ({ head: printed.join('\n'), tail: printed.join('\n') }),
        followLog: async (_ns, _job, w) => {
          out = w;
          for (const l of printed) w.write(`${l}\n`);
          if (ended) w.end();
          await new Promise((r) => w.on('finish', r));
          return true;
        },
      }),
    });
    const as = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'text/html' });
    runner.print('cloning <repo>');
    const nsPage = await app.inject({ method: 'GET', url: '/namespaces/shop', headers: as(ann.token) });
    assert.match(nsPage.body, /<tr data-run="web"><td data-label="Pipeline"><a href="\/namespaces\/shop\/pipelines\/web">web<\/a>/);
    const runPage = await app.inject({ method: 'GET', url: '/namespaces/shop/pipelines/web', headers: as(ann.token) });
    assert.equal(runPage.statusCode, 200);
    assert.match(runPage.body, /<span class="line">cloning &lt;repo&gt;\n<\/span>/);
    assert.match(runPage.body, /data-live="\/namespaces\/shop\/pipelines\/web\/events"/);
    for (const url of ['/namespaces/shop/pipelines/web', '/namespaces/shop/pipelines/web/events']) {
      const other = await app.inject({ method: 'GET', url, headers: as(bob.token) });
      assert.equal(other.statusCode, 404, url);
      assert.match(other.body, /There is no namespace shop that you can see\./);
      assert.doesNotMatch(other.body, /cloning/);
    }
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/namespaces/shop/pipelines/web/events`;
      const { seen } = await events(
        url,
        as(ann.token),
        (s) => s.some((e) => e.event === 'end'),
        () => {
          setTimeout(() => runner.print('step 2'), 100);
          setTimeout(() => runner.end(), 200);
        },
      );
      const kinds = seen.map((e) => (e.event === 'end' ? `end ${e.data}` : `${e.event} ${(JSON.parse(e.data) as { id: string }).id}`));
      assert.deepEqual(kinds, ['section log', 'append log', 'section run', 'end the run ended: deployed']);
      assert.match(seen[1]!.data, /step 2/);
      assert.match(seen[2]!.data, /<dd data-status><span class=\\"ok\\">deployed<\/span><\/dd>/);
      assert.equal((await store.runs.getRecord('shop', 'web'))?.record.status, 'deployed', 'its end recorded');
    } finally {
      await app.close();
    }
  });
});
