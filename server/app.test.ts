import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createAccount } from './accounts.ts';
import { type App, buildApp, type ServiceConfig } from './app.ts';
import { type RouteSpec, routes, SERVICE_VERSION_HEADER } from '../api/routes.ts';
import { MemoryStore } from './store/memory.ts';
import { newToken } from './tokens.ts';

const CONFIG: ServiceConfig = { version: '9.9.9', publicUrl: 'https://devtool.example', rateLimit: { max: 1000, timeWindowMs: 60_000 } };

interface Harness {
  app: App;
  store: MemoryStore;
  log: () => string;
  clock: { now: Date };
}

async function harness(config: Partial<ServiceConfig> = {}): Promise<Harness> {
  const store = new MemoryStore();
  let logged = '';
  const logStream = new Writable({
    write(chunk, _enc, done) {
      logged += String(chunk);
      done();
    },
  });
  const clock = { now: new Date('2026-01-01T00:00:00Z') };
  const app = await buildApp({ store, config: { ...CONFIG, ...config }, now: () => clock.now, logStream, logLevel: 'debug' });
  return { app, store, log: () => logged, clock };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A 4xx answer: its status and its one-line reason; fails when the body is not `{ error }` on one line. */
function refusal(res: { statusCode: number; body: string }): { status: number; error: string } {
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['error'], `body: ${res.body}`);
  assert.equal(typeof body['error'], 'string');
  assert.doesNotMatch(body['error'] as string, /\n/);
  return { status: res.statusCode, error: body['error'] as string };
}

describe('service API', () => {
  test('info answers without a token; me needs one', async () => {
    const h = await harness({ endpointDomain: 'dev.example', ingressClass: 'traefik', registry: 'registry.dev.example' });
    const info = await h.app.inject({ method: 'GET', url: '/api/v1/info' });
    assert.equal(info.statusCode, 200);
    assert.deepEqual(info.json(), {
      version: '9.9.9',
      apiVersion: 'v1',
      capabilities: ['tokens', 'namespaces', 'secrets', 'analytics', 'login', 'kube-credentials', 'pipelines', 'previews', 'users'],
      endpointDomain: 'dev.example',
      ingressClass: 'traefik',
      registry: 'registry.dev.example',
    });
    const me = refusal(await h.app.inject({ method: 'GET', url: '/api/v1/me' }));
    assert.equal(me.status, 401);
    assert.match(me.error, /missing API token.*devtool context use https:\/\/devtool\.example/);
  });

  test('every answer names the version the service runs, refusals and unknown paths too', async () => {
    const h = await harness({ version: '1.4.0-rc.2' });
    const answers = [
      await h.app.inject({ method: 'GET', url: '/api/v1/info' }),
      await h.app.inject({ method: 'GET', url: '/api/v1/me' }),
      await h.app.inject({ method: 'POST', url: '/api/v1/namespaces', payload: { name: 'x' } }),
      await h.app.inject({ method: 'GET', url: '/api/v1/nothing-here' }),
      await h.app.inject({ method: 'GET', url: '/healthz' }),
    ];
    assert.deepEqual(
      answers.map((a) => [a.statusCode, a.headers[SERVICE_VERSION_HEADER]]),
      [
        [200, '1.4.0-rc.2'],
        [401, '1.4.0-rc.2'],
        [401, '1.4.0-rc.2'],
        [404, '1.4.0-rc.2'],
        [200, '1.4.0-rc.2'],
      ],
    );
  });

  test('an unknown or malformed token is refused with one line naming how to log in again', async () => {
    const h = await harness();
    const unknown = refusal(await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(`dvt_${'a'.repeat(43)}`) }));
    assert.deepEqual(unknown, { status: 401, error: 'token revoked or expired: log in again with devtool context use https://devtool.example' });
    for (const header of ['Bearer nonsense', 'Basic abc', `Bearer dvt_${'a'.repeat(42)}`]) {
      const r = refusal(await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: header } }));
      assert.deepEqual(r, {
        status: 401,
        error: 'not a devtool API token (Authorization: Bearer dvt_...): log in again with devtool context use https://devtool.example',
      });
    }
  });

  test('create-user makes the user, its personal namespace and a token that works', async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    assert.match(alice.token, /^dvt_[A-Za-z0-9_-]{43}$/);
    const me = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(alice.token) });
    assert.equal(me.statusCode, 200);
    assert.deepEqual(me.json(), { name: 'alice', admin: false, namespace: 'alice-devtool' });
    // Only the hash is stored.
    assert.ok(![...h.store.tokens.values()].some((t) => JSON.stringify(t).includes(alice.token)));
    await assert.rejects(createAccount(h.store, 'alice', false, h.clock.now), /user alice already exists/);
    await assert.rejects(createAccount(h.store, 'Bad_Name', false, h.clock.now), /invalid user name "Bad_Name"/);
  });

  test('tokens: create shows it once, list has no secret, revoke makes it refused', async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const created = await h.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(alice.token), payload: { name: 'ci' } });
    assert.equal(created.statusCode, 201);
    const { token, id } = created.json() as { token: string; id: string };
    assert.match(token, /^dvt_/);
    assert.equal(created.headers['cache-control'], 'no-store');

    const list = await h.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(token) });
    assert.equal(list.statusCode, 200);
    assert.ok(!list.body.includes(token) && !list.body.includes(alice.token), 'the list holds no token');
    const tokens = (list.json() as { tokens: { id: string; name: string }[] }).tokens;
    assert.deepEqual(tokens.map((t) => t.name).sort(), ['ci', 'created with the account']);
    assert.ok(tokens.every((t) => Object.keys(t).every((k) => ['id', 'name', 'createdAt', 'expiresAt'].includes(k))));

    const revoked = await h.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${id}`, headers: bearer(alice.token) });
    assert.equal(revoked.statusCode, 204);
    const after = refusal(await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(token) }));
    assert.equal(after.status, 401);
    assert.match(after.error, /^token revoked or expired: log in again with devtool context use /);
    // The other token still works; revoking twice is a 404.
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(alice.token) })).statusCode, 200);
    assert.equal(refusal(await h.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${id}`, headers: bearer(alice.token) })).status, 404);
  });

  test("expired tokens (a run's whose end nobody recorded) are left out of the list and deleted; the sweep takes every user's", async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const run = newToken('alice', 'pipeline shop in alice-devtool (run abc)', h.clock.now, 600 / 86_400);
    await h.store.addToken({ ...run.record, scope: 'run' });
    const names = async () =>
      ((await h.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(alice.token) })).json() as { tokens: { name: string }[] }).tokens.map(
        (t) => t.name,
      );
    assert.deepEqual(await names(), ['created with the account', 'pipeline shop in alice-devtool (run abc)']);
    h.clock.now = new Date(h.clock.now.getTime() + 601_000);
    assert.deepEqual(await names(), ['created with the account']);
    assert.equal(h.store.tokens.has(run.record.hash), false, 'deleted as it was found');
    const bobs = newToken('bob', 'old', new Date('2025-01-01T00:00:00Z'), 1);
    await h.store.addToken(bobs.record);
    assert.equal(await h.store.sweepExpiredTokens(h.clock.now), 1);
    assert.equal(h.store.tokens.size, 1);
  });

  test('users: an admin disables, enables and deletes another user; a plain user and the admin themself are refused', async () => {
    const h = await harness();
    const root = await createAccount(h.store, 'root', true, h.clock.now);
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const bob = await createAccount(h.store, 'bob', false, h.clock.now);
    const call = (method: 'POST' | 'DELETE', url: string, token: string) => h.app.inject({ method, url, headers: bearer(token) });
    const me = (token: string) => h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(token) });
    await h.app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: bearer(bob.token), payload: { name: 'shop' } });

    assert.deepEqual(refusal(await call('POST', '/api/v1/users/bob/disable', alice.token)), { status: 403, error: 'only admins can disable users' });
    assert.deepEqual(refusal(await call('DELETE', '/api/v1/users/bob', alice.token)), { status: 403, error: 'only admins can delete users' });
    assert.equal(refusal(await call('POST', '/api/v1/users/root/disable', root.token)).status, 409);
    assert.equal(refusal(await call('POST', '/api/v1/users/nobody/disable', root.token)).status, 404);

    const disabled = await call('POST', '/api/v1/users/bob/disable', root.token);
    assert.deepEqual(disabled.json(), { name: 'bob', admin: false, disabled: true });
    assert.equal(refusal(await me(bob.token)).status, 401);
    assert.deepEqual(await h.store.listTokens('bob'), [], 'its tokens are deleted');
    assert.equal(h.store.namespaces.get('shop')?.status, 'Active', 'its namespaces stay');
    // A token made after the disable (by a race) is refused all the same.
    const late = newToken('bob', 'late', h.clock.now);
    await h.store.addToken(late.record);
    assert.deepEqual(refusal(await me(late.token)), { status: 401, error: 'the account bob is disabled: ask the operator of this service' });
    assert.deepEqual((await call('POST', '/api/v1/users/bob/enable', root.token)).json(), { name: 'bob', admin: false, disabled: false });
    assert.equal((await me(late.token)).statusCode, 200);

    const deleted = await call('DELETE', '/api/v1/users/bob', root.token);
    assert.deepEqual(deleted.json(), { name: 'bob', namespaces: ['bob-devtool', 'shop'] });
    assert.equal(h.store.namespaces.get('shop')?.status, 'Terminating');
    assert.equal(await h.store.getUser('bob'), undefined);
    assert.equal(refusal(await me(late.token)).status, 401);
    assert.equal((await me(alice.token)).statusCode, 200, 'nobody else is touched');
  });

  test('users: an admin lists them, creates one with its first token and makes another an admin; a plain user is refused', async () => {
    const h = await harness();
    const root = await createAccount(h.store, 'root', true, h.clock.now);
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const send = (method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: object) =>
      h.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

    assert.deepEqual(refusal(await send('GET', '/api/v1/users', alice.token)), { status: 403, error: 'only admins can list users' });
    assert.deepEqual(refusal(await send('POST', '/api/v1/users', alice.token, { name: 'mallory', admin: true })), {
      status: 403,
      error: 'only admins can create users',
    });
    assert.equal(await h.store.getUser('mallory'), undefined, 'nothing made for a plain user');
    assert.deepEqual(refusal(await send('PUT', '/api/v1/users/alice/admin', alice.token, { admin: true })), {
      status: 403,
      error: 'only admins can make or unmake admin users',
    });

    const made = await send('POST', '/api/v1/users', root.token, { name: 'carol' });
    assert.equal(made.statusCode, 201);
    const carol = made.json() as { name: string; admin: boolean; namespace: string; token: string };
    assert.deepEqual({ ...carol, token: typeof carol.token }, { name: 'carol', admin: false, namespace: 'carol-devtool', token: 'string' });
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(carol.token) })).statusCode, 200, 'its token works');
    assert.equal(h.store.namespaces.get('carol-devtool')?.owner, 'carol');
    assert.deepEqual(refusal(await send('POST', '/api/v1/users', root.token, { name: 'carol' })), { status: 409, error: 'user carol already exists' });
    assert.equal(refusal(await send('POST', '/api/v1/users', root.token, { name: 'Bad_Name' })).status, 400);

    assert.deepEqual((await send('PUT', '/api/v1/users/alice/admin', root.token, { admin: true })).json(), { name: 'alice', admin: true, disabled: false });
    assert.equal((await send('GET', '/api/v1/users', alice.token)).statusCode, 200, 'alice acts as an admin at once');
    assert.deepEqual((await send('PUT', '/api/v1/users/alice/admin', root.token, { admin: false })).json(), { name: 'alice', admin: false, disabled: false });
    assert.equal(refusal(await send('PUT', '/api/v1/users/root/admin', root.token, { admin: false })).status, 409, "never one's own account");
    assert.equal(refusal(await send('PUT', '/api/v1/users/nobody/admin', root.token, { admin: true })).status, 404);
    assert.deepEqual((await send('GET', '/api/v1/users', root.token)).json(), {
      users: [
        { name: 'alice', admin: false, disabled: false },
        { name: 'carol', admin: false, disabled: false },
        { name: 'root', admin: true, disabled: false },
      ],
    });
  });

  test("a pipeline run's token does what a run needs and nothing else: no tokens, no secrets written, no namespaces", async () => {
    const h = await harness();
    await createAccount(h.store, 'alice', false, h.clock.now);
    const run = newToken('alice', 'pipeline shop in alice-devtool (run abc)', h.clock.now, 1);
    await h.store.addToken({ ...run.record, scope: 'run' });
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(run.token) })).statusCode, 200);
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/secret-values', headers: bearer(run.token) })).statusCode, 200);
    for (const [method, url, payload] of [
      ['POST', '/api/v1/tokens', { name: 'forever' }],
      ['GET', '/api/v1/tokens', undefined],
      ['PUT', '/api/v1/secrets/X', { value: 'y' }],
      ['POST', '/api/v1/namespaces', { name: 'grab' }],
    ] as const) {
      const refused = refusal(await h.app.inject({ method, url, headers: bearer(run.token), ...(payload ? { payload } : {}) }));
      assert.equal(refused.status, 403, `${method} ${url}`);
      assert.match(refused.error, /^a pipeline run's token cannot /);
    }
    assert.equal((await h.store.listTokens('alice')).length, 2, 'no token was made');
  });

  test("a user cannot revoke another user's token", async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const bob = await createAccount(h.store, 'bob', true, h.clock.now);
    const aliceId = (await h.store.listTokens('alice'))[0]!.id;
    const r = refusal(await h.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${aliceId}`, headers: bearer(bob.token) }));
    assert.equal(r.status, 404);
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(alice.token) })).statusCode, 200);
  });

  test('a token with an expiry is refused once it has passed', async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const created = await h.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(alice.token), payload: { name: 'short', expiresInDays: 1 } });
    const { token, expiresAt } = created.json() as { token: string; expiresAt: string };
    assert.equal(expiresAt, '2026-01-02T00:00:00.000Z');
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(token) })).statusCode, 200);
    h.clock.now = new Date('2026-01-02T00:00:01Z');
    assert.equal(refusal(await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(token) })).status, 401);
  });

  test('bad input is a 400 naming the field, on one line', async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const cases: [object | string, RegExp][] = [
      [{}, /^body: must have required property 'name'$/],
      [{ name: 'x', extra: 1 }, /^body: unknown field extra$/],
      [{ name: 'x', expiresInDays: 0 }, /^body\.expiresInDays: must be >= 1$/],
      [{ name: 7 }, /^body\.name: must be string$/],
      ['{not json', /JSON/],
    ];
    for (const [payload, expected] of cases) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        headers: { ...bearer(alice.token), 'content-type': 'application/json' },
        payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      });
      const r = refusal(res);
      assert.equal(r.status, 400, `${JSON.stringify(payload)}: ${r.error}`);
      assert.match(r.error, expected);
    }
    const unknown = refusal(await h.app.inject({ method: 'GET', url: '/api/v1/nothing' }));
    assert.deepEqual(unknown, { status: 404, error: 'no route GET /api/v1/nothing' });
    // A browser asks for a page first: it gets an HTML 404; API clients (curl's */*) keep the JSON.
    const browser = await h.app.inject({ method: 'GET', url: '/nothing?x=<b>', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(browser.statusCode, 404);
    assert.match(browser.headers['content-type'] as string, /^text\/html/);
    assert.match(browser.body, /<h1>Page not found<\/h1>/);
    assert.match(browser.body, /<code>\/nothing<\/code>/);
    const curl = refusal(await h.app.inject({ method: 'GET', url: '/nothing', headers: { accept: '*/*' } }));
    assert.deepEqual(curl, { status: 404, error: 'no route GET /nothing' });
  });

  test('namespaces: create, taken, invalid, reserved; listed with their status', async () => {
    const h = await harness({ serviceNamespace: 'devtool', reservedNamespaces: ['monitoring'] });
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const create = (name: string, token = alice.token) =>
      h.app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: bearer(token), payload: { name } });
    const made = await create('shop');
    assert.equal(made.statusCode, 201);
    assert.deepEqual(made.json(), { name: 'shop', status: 'Active', owner: 'alice', personal: false });

    assert.deepEqual(refusal(await create('shop')), { status: 409, error: 'namespace shop already exists and is yours: devtool namespace use shop' });
    const bob = await createAccount(h.store, 'bob', false, h.clock.now);
    assert.deepEqual(refusal(await create('shop', bob.token)), { status: 409, error: 'namespace shop is taken: choose another name' });
    assert.deepEqual(refusal(await create('kube-foo')), {
      status: 403,
      error: "namespace kube-foo is reserved (Kubernetes' own: kube-*, default): choose another name",
    });
    assert.equal(refusal(await create('default')).status, 403);
    assert.deepEqual(refusal(await create('devtool')), {
      status: 403,
      error: "namespace devtool is reserved (the devtool service's own namespace): choose another name",
    });
    assert.deepEqual(refusal(await create('monitoring')), {
      status: 403,
      error: "namespace monitoring is reserved (on the operator's list: monitoring): choose another name",
    });
    const invalid = refusal(await create('Shop_1'));
    assert.equal(invalid.status, 400);
    assert.match(invalid.error, /^body\.name: invalid value: DNS-1123 label: lowercase letters, digits and '-'/);
    assert.match(refusal(await create('a'.repeat(64))).error, /^body\.name: must NOT have more than 63 characters$/);
    assert.deepEqual(refusal(await create('bob-devtool')), {
      status: 400,
      error: 'namespace bob-devtool: names ending in -devtool are reserved for personal namespaces',
    });

    await h.app.inject({ method: 'DELETE', url: '/api/v1/namespaces/shop', headers: bearer(alice.token) });
    assert.deepEqual(refusal(await create('shop')), { status: 409, error: 'namespace shop is yours and being deleted: create it again once it is gone' });
    const list = await h.app.inject({ method: 'GET', url: '/api/v1/namespaces', headers: bearer(alice.token) });
    assert.deepEqual(list.json(), {
      namespaces: [
        { name: 'alice-devtool', status: 'Active', owner: 'alice', personal: true },
        { name: 'shop', status: 'Terminating', owner: 'alice', personal: false },
      ],
    });
  });

  test("namespaces: another user's namespace is neither listed nor deletable; an admin may delete it", async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const bob = await createAccount(h.store, 'bob', false, h.clock.now);
    const root = await createAccount(h.store, 'root', true, h.clock.now);
    const del = (name: string, token: string) => h.app.inject({ method: 'DELETE', url: `/api/v1/namespaces/${name}`, headers: bearer(token) });

    const bobList = await h.app.inject({ method: 'GET', url: '/api/v1/namespaces', headers: bearer(bob.token) });
    assert.deepEqual(
      (bobList.json() as { namespaces: { name: string }[] }).namespaces.map((n) => n.name),
      ['bob-devtool'],
    );

    assert.deepEqual(refusal(await del('alice-devtool', bob.token)), {
      status: 403,
      error: 'namespace alice-devtool: only its owner (alice) or an admin can delete it',
    });
    assert.equal(h.store.namespaces.get('alice-devtool')?.status, 'Active');
    assert.deepEqual(refusal(await del('kube-system', root.token)), {
      status: 403,
      error: 'namespace kube-system is not managed by devtool: devtool does not delete it',
    });
    assert.deepEqual(refusal(await del('nowhere', bob.token)), { status: 404, error: 'namespace nowhere does not exist' });
    const shop = await h.app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: bearer(alice.token), payload: { name: 'shop' } });
    assert.equal(shop.statusCode, 201);
    assert.equal(refusal(await del('shop', bob.token)).status, 403);
    assert.equal((await del('shop', root.token)).statusCode, 202);
    assert.equal(h.store.namespaces.get('shop')?.status, 'Terminating');
    assert.deepEqual(refusal(await del('bob-devtool', bob.token)), {
      status: 403,
      error: 'namespace bob-devtool is the personal namespace of bob: it lives as long as the account',
    });
  });

  test('secrets: stored, listed by name only, values only from secret-values, deleted', async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const bob = await createAccount(h.store, 'bob', false, h.clock.now);
    const put = (name: string, value: unknown, token = alice.token) =>
      h.app.inject({ method: 'PUT', url: `/api/v1/secrets/${name}`, headers: bearer(token), payload: { value } });
    assert.equal((await put('DB_PASSWORD', 's3cr3t-value-1')).statusCode, 204);
    assert.equal((await put('API_KEY', 's3cr3t-value-2')).statusCode, 204);
    assert.equal((await put('API_KEY', 's3cr3t-value-3')).statusCode, 204);
    assert.match(refusal(await put('1BAD', 'x')).error, /^params\.name: invalid value: letters, digits and '_'/);
    assert.match(refusal(await put('OK', 5)).error, /^body\.value: must be string$/);
    assert.match(refusal(await put('BIG', 'x'.repeat(64 * 1024 + 1))).error, /^body\.value: must NOT have more than 65536 characters$/);
    for (let i = 0; i < 10; i++) assert.equal((await put(`FILL_${i}`, 'x'.repeat(64 * 1024))).statusCode, 204);
    assert.deepEqual(refusal(await put('FILL_10', 'x'.repeat(64 * 1024))), {
      status: 413,
      error: 'stored secrets are limited to 700 KiB per user in all: delete some first',
    });
    assert.equal((await put('FILL_9', 'replaced')).statusCode, 204, 'replacing a value counts its new size only');
    for (let i = 0; i < 10; i++) await h.app.inject({ method: 'DELETE', url: `/api/v1/secrets/FILL_${i}`, headers: bearer(alice.token) });

    const list = await h.app.inject({ method: 'GET', url: '/api/v1/secrets', headers: bearer(alice.token) });
    assert.deepEqual(list.json(), { secrets: [{ name: 'API_KEY' }, { name: 'DB_PASSWORD' }] });
    assert.doesNotMatch(list.body, /s3cr3t/);

    const values = await h.app.inject({ method: 'GET', url: '/api/v1/secret-values', headers: bearer(alice.token) });
    assert.deepEqual(values.json(), { values: { DB_PASSWORD: 's3cr3t-value-1', API_KEY: 's3cr3t-value-3' } });
    assert.equal(values.headers['cache-control'], 'no-store');
    const bobValues = await h.app.inject({ method: 'GET', url: '/api/v1/secret-values', headers: bearer(bob.token) });
    assert.deepEqual(bobValues.json(), { values: {} });

    assert.equal((await h.app.inject({ method: 'DELETE', url: '/api/v1/secrets/API_KEY', headers: bearer(alice.token) })).statusCode, 204);
    assert.deepEqual(refusal(await h.app.inject({ method: 'DELETE', url: '/api/v1/secrets/API_KEY', headers: bearer(alice.token) })), {
      status: 404,
      error: 'no stored secret API_KEY',
    });
    assert.doesNotMatch(h.log(), /s3cr3t/, 'no secret value in the log');
  });

  test('no token nor secret value reaches the log', async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const created = await h.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(alice.token), payload: { name: 'x' } });
    const token = (created.json() as { token: string }).token;
    await h.app.inject({ method: 'PUT', url: '/api/v1/secrets/PASS', headers: bearer(token), payload: { value: 'hunter2-very-secret' } });
    // A handler logging a request object or a body is redacted too.
    h.app.log.info({ req: { headers: { authorization: `Bearer ${token}` } }, body: { value: 'hunter2-very-secret', token } }, 'a careless line');
    const log = h.log();
    assert.match(log, /a careless line/);
    assert.ok(log.includes('/api/v1/secrets/PASS'), 'requests are logged');
    assert.ok(!log.includes(token) && !log.includes(alice.token), 'no token in the log');
    assert.ok(!log.includes('hunter2-very-secret'), 'no secret value in the log');
  });

  test('the token routes are rate-limited per client with a one-line 429', async () => {
    const h = await harness({ rateLimit: { max: 3, timeWindowMs: 60_000 } });
    const alice = await createAccount(h.store, 'alice', false, h.clock.now);
    const statuses: number[] = [];
    let last: { statusCode: number; body: string } | undefined;
    for (let i = 0; i < 5; i++) {
      last = await h.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(alice.token), payload: { name: `t${i}` } });
      statuses.push(last.statusCode);
    }
    assert.deepEqual(statuses, [201, 201, 201, 429, 429]);
    assert.match(refusal(last!).error, /^too many requests: try again in \d+ s$/);
    // Per client, as the ingress names it: the last X-Forwarded-For entry, on a connection from the
    // ingress's address. Entries the client wrote itself (before it) do not make it another client;
    // another address is another client.
    const behind = await harness({ rateLimit: { max: 3, timeWindowMs: 60_000 }, trustedProxyAddresses: ['10.244.0.1/32'] });
    const bob = await createAccount(behind.store, 'bob', false, behind.clock.now);
    const post = (forwarded: string, remoteAddress: string) =>
      behind.app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        remoteAddress,
        headers: { ...bearer(bob.token), 'x-forwarded-for': forwarded },
        payload: { name: 'x' },
      });
    const viaIngress = (forwarded: string) => post(forwarded, '10.244.0.1');
    assert.deepEqual(
      [
        (await viaIngress('203.0.113.9')).statusCode,
        (await viaIngress('203.0.113.9')).statusCode,
        (await viaIngress('203.0.113.9')).statusCode,
        (await viaIngress('10.9.9.9, 203.0.113.9')).statusCode,
        (await viaIngress('10.9.9.8, 203.0.113.9')).statusCode,
      ],
      [201, 201, 201, 429, 429],
    );
    assert.equal((await viaIngress('203.0.113.9, 198.51.100.7')).statusCode, 201);
    // Any other peer (a pod dialling the Service) is its socket address, whatever it writes.
    const fromPod = [];
    for (let i = 0; i < 5; i++) fromPod.push((await post(`198.51.100.${i}`, '10.244.0.7')).statusCode);
    assert.deepEqual(fromPod, [201, 201, 201, 429, 429]);
    // Other routes are not limited.
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(alice.token) })).statusCode, 200);
  });

  test('every route of the contract is served, with its method and its token rule', async () => {
    const h = await harness();
    for (const [id, r] of Object.entries(routes) as [string, RouteSpec][]) {
      const url = r.url.replace(/:([A-Za-z]+)/g, (_, name: string) => (name === 'id' ? 'abc123' : 'SOME_NAME'.toLowerCase()));
      const res = await h.app.inject({ method: r.method, url });
      assert.notEqual(res.statusCode, 404, `${id}: ${r.method} ${url}: ${res.body}`);
      assert.equal(res.statusCode === 401, r.auth, `${id}: answered ${res.statusCode} without a token`);
    }
  });

  test('a known path under another method is 405 naming the methods; a too long path parameter is 414; both one line', async () => {
    const h = await harness();
    const patch = await h.app.inject({ method: 'PATCH', url: '/api/v1/namespaces' });
    assert.deepEqual(refusal(patch), { status: 405, error: 'PATCH /api/v1/namespaces: method not allowed, use GET or HEAD or POST' });
    assert.equal(patch.headers['allow'], 'GET, HEAD, POST');
    assert.equal(refusal(await h.app.inject({ method: 'DELETE', url: '/api/v1/secrets/A_B' })).status, 401, 'a declared method keeps its answer');
    assert.equal(refusal(await h.app.inject({ method: 'GET', url: '/api/v1/nothing' })).status, 404);
    const long = refusal(await h.app.inject({ method: 'PUT', url: `/api/v1/secrets/${'A'.repeat(300)}` }));
    assert.deepEqual(long, { status: 414, error: 'a path parameter is longer than 256 characters' });
  });

  test('a request whose method Node could not name (QUERY before Node 20.20) is refused like a method the path does not take', async () => {
    const h = await harness();
    await h.app.ready();
    const answer = (url: string) => {
      const res = { status: 0, headers: {} as Record<string, string>, body: '' };
      const fake = {
        writeHead: (status: number, headers: Record<string, string>) => Object.assign(res, { status, headers }),
        end: (body: string) => (res.body = body),
      };
      h.app.server.emit('request', { method: undefined, url, headers: {} }, fake);
      return res;
    };
    const known = answer('/api/v1/info');
    assert.deepEqual(
      [known.status, known.headers['allow'], JSON.parse(known.body)],
      [405, 'GET, HEAD', { error: '/api/v1/info: method not allowed, use GET or HEAD' }],
    );
    assert.equal(answer('/nowhere').status, 404);
  });

  test('the schema refuses what the handlers refuse: a personal namespace name, an unknown grant type', async () => {
    const h = await harness();
    const alice = await createAccount(h.store, 'alice', false, new Date());
    const create = (name: string) => h.app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: bearer(alice.token), payload: { name } });
    assert.deepEqual(refusal(await create('-devtool')), {
      status: 400,
      error: 'body.name: invalid value: names ending in -devtool are reserved for personal namespaces',
    });
    const preview = { name: 'x-devtool', scope: 'personal', repository: 'https://git.example/app', variables: [], timeoutSeconds: 60 };
    const deploy = await h.app.inject({ method: 'POST', url: '/api/v1/previews', headers: bearer(alice.token), payload: preview });
    assert.deepEqual(refusal(deploy), { status: 400, error: 'preview environment x-devtool: names ending in -devtool are reserved for personal namespaces' });
    assert.equal(routes.deployPreview.body.properties.name.not.pattern, '-devtool$');
    const grant = await h.app.inject({ method: 'POST', url: '/auth/token', payload: { grant_type: 'password' } });
    assert.equal(grant.statusCode, 400);
    assert.equal(grant.json().error, 'unsupported_grant_type');
    const schema = routes.tokenGrant.body.properties.grant_type;
    assert.deepEqual(
      schema.anyOf.map((s) => s.const),
      ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
    );
  });

  test('healthz answers; readyz follows the store', async () => {
    const h = await harness();
    assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    h.store.down = true;
    assert.equal(refusal(await h.app.inject({ method: 'GET', url: '/readyz' })).status, 503);
  });
});

test('a replica that is stopping finishes the request in flight and closes its connection, so the proxy moves on', async () => {
  const h = await harness();
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived: () => void = () => {};
  const inFlight = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  h.app.get('/test-slow', async () => {
    arrived();
    await held;
    return { ok: true };
  });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = h.app.server.address() as { port: number };
  const response = fetch(`http://127.0.0.1:${port}/test-slow`);
  await inFlight;
  const closed = h.app.close();
  await new Promise((resolve) => setTimeout(resolve, 20)); // the close has begun (its preClose hooks ran)
  release();
  const res = await response;
  assert.equal(res.status, 200, 'served, not 503');
  assert.equal(res.headers.get('connection'), 'close');
  await closed;
});
