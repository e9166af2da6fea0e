import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FRONT_DOOR_KEY_HEADER, WAKE_HOST_HEADER, WAKE_NAMESPACE_HEADER, WAKING_PATH } from '../../api/front-door.ts';
import { buildApp, type ServiceConfig } from '../app.ts';
import { MemoryStore } from '../store/memory.ts';
import { isFrontDoorKey } from './front-door-key.ts';
import type { NamespaceRest } from './route.ts';
import { WakeOnce } from './wake-once.ts';

const KEY = 'k'.repeat(24) + 'front-door-key-of-the-test';
const CONFIG: ServiceConfig = { version: '9.9.9', rateLimit: { max: 1000, timeWindowMs: 60_000 }, frontDoorKey: KEY };

/** The app with namespaces in the given states and a wake that takes until `finish()`. */
async function harness(states: Record<string, NamespaceRest>, config: Partial<ServiceConfig> = {}) {
  const woken: string[] = [];
  let finish = () => {};
  const wake = (namespace: string) =>
    new Promise<void>((resolve) => {
      woken.push(namespace);
      finish = () => {
        states[namespace] = 'waking';
        resolve();
      };
    });
  const app = await buildApp({
    store: new MemoryStore(),
    config: { ...CONFIG, ...config },
    logStream: false,
    waking: { rest: async (ns) => states[ns], wakes: new WakeOnce(wake, () => {}) },
  });
  const ask = (o: { key?: string; namespace?: string; method?: 'GET' | 'POST' | 'HEAD'; host?: string } = {}) =>
    app.inject({
      method: o.method ?? 'GET',
      url: WAKING_PATH,
      headers: {
        ...(o.key === undefined ? {} : { [FRONT_DOOR_KEY_HEADER]: o.key }),
        [WAKE_NAMESPACE_HEADER]: o.namespace ?? 'shop',
        [WAKE_HOST_HEADER]: o.host ?? 'web-shop.devtool.test',
        ...(o.method === 'POST' ? { 'content-type': 'application/octet-stream' } : {}),
      },
      ...(o.method === 'POST' ? { payload: Buffer.from('anything') } : {}),
    });
  return { app, ask, woken, finish: () => finish() };
}

test('the key: only the exact key matches, and nothing matches when none is configured', () => {
  assert.equal(isFrontDoorKey(KEY, KEY), true);
  assert.equal(isFrontDoorKey(KEY, `${KEY}x`), false);
  assert.equal(isFrontDoorKey(KEY, KEY.slice(0, -1)), false);
  assert.equal(isFrontDoorKey(KEY, ''), false);
  assert.equal(isFrontDoorKey(KEY, undefined), false);
  assert.equal(isFrontDoorKey(KEY, [KEY, KEY]), false);
  assert.equal(isFrontDoorKey(undefined, ''), false);
  assert.equal(isFrontDoorKey('', ''), false);
});

test('without the key, or with a wrong one, a 403 and no wake', async () => {
  const h = await harness({ shop: 'sleeping' });
  for (const key of [undefined, '', 'wrong', KEY.toUpperCase()]) {
    const r = await h.ask({ key });
    assert.equal(r.statusCode, 403, `key ${key}`);
    assert.equal(r.body, 'refused: only the front door asks for a wake\n');
  }
  assert.deepEqual(h.woken, []);
  // No key configured (an install without the front door): even the right one is refused.
  const off = await harness({ shop: 'sleeping' }, { frontDoorKey: undefined });
  assert.equal((await off.ask({ key: KEY })).statusCode, 403);
  assert.deepEqual(off.woken, []);
});

test('a sleeping namespace: many requests at once start one wake and all get the reloading page', async () => {
  const h = await harness({ shop: 'sleeping' });
  const answers = await Promise.all(Array.from({ length: 20 }, () => h.ask({ key: KEY })));
  assert.deepEqual(h.woken, ['shop']);
  for (const r of answers) {
    assert.equal(r.statusCode, 503);
    assert.equal(r.headers['retry-after'], '5');
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
    assert.doesNotMatch(String(r.headers['content-security-policy']), /script-src/);
    assert.match(r.body, /<meta http-equiv="refresh" content="5">/);
    assert.match(r.body, /The namespace <code>shop<\/code> was asleep and is waking up/);
    assert.match(r.body, /until <code>web-shop\.devtool\.test<\/code> answers/);
    assert.doesNotMatch(r.body, /<script/);
  }
  // Once the wake has started (WAKING_SINCE), requests get the page and start nothing.
  h.finish();
  await new Promise((r) => setImmediate(r));
  const again = await h.ask({ key: KEY });
  assert.equal(again.statusCode, 503);
  assert.deepEqual(h.woken, ['shop']);
});

test('a waking or already awake namespace gets the page and no wake', async () => {
  const h = await harness({ shop: 'waking', blog: 'awake' });
  assert.equal((await h.ask({ key: KEY })).statusCode, 503);
  assert.equal((await h.ask({ key: KEY, namespace: 'blog' })).statusCode, 503);
  assert.deepEqual(h.woken, []);
});

test('an API client (not GET or HEAD) gets one line of plain text; HEAD the page headers', async () => {
  const h = await harness({ shop: 'sleeping' });
  const post = await h.ask({ key: KEY, method: 'POST' });
  assert.equal(post.statusCode, 503);
  assert.equal(post.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(post.headers['retry-after'], '5');
  assert.equal(post.body, 'namespace shop is waking up: retry in 5 s\n');
  const head = await h.ask({ key: KEY, method: 'HEAD' });
  assert.equal(head.statusCode, 503);
  assert.equal(head.headers['content-type'], 'text/html; charset=utf-8');
  assert.deepEqual(h.woken, ['shop']);
});

test('a namespace the service did not make, or a malformed one, is not woken; a strange host is not shown', async () => {
  const h = await harness({ shop: 'sleeping' });
  const other = await h.ask({ key: KEY, namespace: 'kube-system' });
  assert.equal(other.statusCode, 404);
  assert.equal(other.body, 'no namespace kube-system of this devtool service\n');
  assert.equal((await h.ask({ key: KEY, namespace: '../x' })).statusCode, 400);
  const odd = await h.ask({ key: KEY, host: '<b>x</b>' });
  assert.doesNotMatch(odd.body, /<b>|&lt;b&gt;/);
  assert.match(odd.body, /until the application answers/);
});

test('a failed wake is logged and a later request starts a new one', async () => {
  const failures: string[] = [];
  let calls = 0;
  const once = new WakeOnce(
    async () => {
      calls++;
      throw new Error('quota exceeded');
    },
    (ns, err) => failures.push(`${ns}: ${(err as Error).message}`),
  );
  await Promise.all([once.start('shop'), once.start('shop')]);
  assert.equal(calls, 1);
  await once.start('shop');
  assert.equal(calls, 2);
  assert.deepEqual(failures, ['shop: quota exceeded', 'shop: quota exceeded']);
  assert.equal(once.isRunning('shop'), false);
});
