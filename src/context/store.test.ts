import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DevtoolHome } from '../home.ts';
import { CLOUD_URL, looksLikeUrl, normalizeServiceUrl } from '../service/cloud.ts';
import { ContextStore } from './store.ts';

const root = mkdtempSync(join(tmpdir(), 'devtool-store-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Two fake clusters (nothing is contacted); the e2e tests use the same file. */
const KUBECONFIG = readFileSync(new URL('./testdata/two-clusters.kubeconfig.yaml', import.meta.url), 'utf8');

let n = 0;
/** A fresh home and kubeconfig; `env` adds variables (DEVTOOL_URL...). */
function setup(env: NodeJS.ProcessEnv = {}, kubeconfig = KUBECONFIG) {
  const d = mkdtempSync(join(root, `case${n++}-`));
  const kc = join(d, 'kubeconfig');
  writeFileSync(kc, kubeconfig);
  const home = new DevtoolHome(join(d, 'devtool-home'));
  const fullEnv = { HOME: join(d, 'home'), KUBECONFIG: kc, ...env };
  return { home, kc, env: fullEnv, store: () => new ContextStore(home, fullEnv) };
}

test('with nothing stored, the kubeconfig current-context is current', async () => {
  const { store } = setup();
  const ctx = await store().requireCurrent();
  assert.equal(ctx.name, 'alpha');
  assert.equal(ctx.source, 'kubeconfig');
  assert.equal(ctx.isDevtool, false);
  assert.equal(ctx.namespace, 'default');
  assert.equal(ctx.host, 'https://alpha.invalid:6443');
  assert.equal(ctx.kube?.hasCredentials, true);
});

test('list shows every kubeconfig context, with their namespaces', async () => {
  const { store } = setup();
  const list = await store().list();
  assert.deepEqual(
    list.map((c) => [c.name, c.namespace, c.host, c.isDevtool]),
    [
      ['alpha', 'default', 'https://alpha.invalid:6443', false],
      ['beta', 'team', 'https://beta.invalid:6443', false],
    ],
  );
});

test('use stores settings and makes the context current, across instances', async () => {
  const { store, home } = setup();
  const used = await store().use('beta', { isDevtool: false, namespace: 'dev', builder: 'tcp://buildkit:1234' });
  assert.equal(used.name, 'beta');
  assert.equal(used.namespace, 'dev');
  assert.equal(used.host, 'https://beta.invalid:6443');

  const again = store();
  const current = await again.requireCurrent();
  assert.equal(current.name, 'beta');
  assert.equal(current.source, 'stored');
  assert.equal(current.namespace, 'dev');
  assert.equal(current.builder, 'tcp://buildkit:1234');
  const listed = (await again.list()).find((c) => c.name === 'beta')!;
  assert.equal(listed.namespace, 'dev');

  // Settings merge: a later use keeps what it does not change; undefined removes.
  await again.use('beta', { isDevtool: false, registry: 'localhost:5000' });
  let c = await store().requireCurrent();
  assert.equal(c.namespace, 'dev');
  assert.equal(c.registry, 'localhost:5000');
  await store().use('beta', { isDevtool: false, builder: undefined });
  c = await store().requireCurrent();
  assert.equal(c.builder, undefined);

  assert.equal(statSync(home.contextsFile).mode & 0o777, 0o600);
  assert.equal(JSON.parse(readFileSync(home.contextsFile, 'utf8')).current, 'beta');
});

test('service contexts are stored with their token in a 0600 file and listed', async () => {
  const { store, home } = setup();
  const url = normalizeServiceUrl('devtool.example.com/');
  const ctx = await store().use(url, { isDevtool: true, token: 'secret-token' });
  assert.equal(ctx.name, 'https://devtool.example.com');
  assert.equal(ctx.host, 'https://devtool.example.com');
  assert.equal(ctx.namespace, 'default');
  assert.equal(statSync(home.contextsFile).mode & 0o777, 0o600);
  assert.equal(JSON.parse(readFileSync(home.contextsFile, 'utf8')).contexts[url].token, 'secret-token');

  const s = store();
  assert.deepEqual(
    (await s.list()).map((c) => c.name),
    ['alpha', 'beta', 'https://devtool.example.com'],
  );
  const current = await s.requireCurrent();
  assert.equal(current.name, url);
  assert.equal(current.isDevtool, true);
  assert.equal(current.token, 'secret-token');
});

test('setNamespace changes the current context only', async () => {
  const { store } = setup();
  const ctx = await store().setNamespace('feature-x');
  assert.equal(ctx.name, 'alpha');
  assert.equal(ctx.namespace, 'feature-x');
  const list = await store().list();
  assert.equal(list.find((c) => c.name === 'alpha')!.namespace, 'feature-x');
  assert.equal(list.find((c) => c.name === 'beta')!.namespace, 'team');
  assert.equal((await store().requireCurrent()).namespace, 'feature-x');
});

test('delete removes a stored context and falls back to the kubeconfig', async () => {
  const { store } = setup();
  await store().use('https://devtool.example.com', { isDevtool: true, token: 't' });
  const s = store();
  // Any spelling of the URL finds it.
  assert.equal(s.delete('devtool.example.com/'), true);
  assert.equal(s.delete('https://devtool.example.com'), false);
  assert.equal(s.delete('nothing-here'), false);
  const after = store();
  assert.deepEqual(
    (await after.list()).map((c) => c.name),
    ['alpha', 'beta'],
  );
  assert.equal((await after.requireCurrent()).name, 'alpha');
});

test('precedence: DEVTOOL_URL/DEVTOOL_TOKEN, then the stored current context, then the kubeconfig', async () => {
  const { home, env } = setup();
  await new ContextStore(home, env).use('beta', { isDevtool: false, namespace: 'dev' });

  const stored = await new ContextStore(home, env).requireCurrent();
  assert.equal(stored.name, 'beta', 'the stored current context beats the kubeconfig current-context');

  const withUrl = await new ContextStore(home, { ...env, DEVTOOL_URL: 'svc.example.com/', DEVTOOL_TOKEN: 'env-token' }).requireCurrent();
  assert.equal(withUrl.name, 'https://svc.example.com');
  assert.equal(withUrl.source, 'environment');
  assert.equal(withUrl.isDevtool, true);
  assert.equal(withUrl.token, 'env-token');

  const tokenOnly = await new ContextStore(home, { ...env, DEVTOOL_TOKEN: 'env-token' }).requireCurrent();
  assert.equal(tokenOnly.name, CLOUD_URL, 'DEVTOOL_URL defaults to the cloud URL');
  assert.equal(tokenOnly.token, 'env-token');

  // The environment context is for this process only: nothing was stored.
  assert.equal(JSON.parse(readFileSync(home.contextsFile, 'utf8')).current, 'beta');
  await assert.rejects(new ContextStore(home, { ...env, DEVTOOL_TOKEN: 'x' }).setNamespace('n'), /DEVTOOL_URL\/DEVTOOL_TOKEN/);

  // A stored service context's settings apply to the same URL given in DEVTOOL_URL.
  await new ContextStore(home, env).use('https://svc.example.com', { isDevtool: true, namespace: 'svc-ns', token: 'stored', userId: 'u-1' });
  const merged = new ContextStore(home, { ...env, DEVTOOL_URL: 'https://svc.example.com' });
  const m = await merged.requireCurrent();
  assert.equal(m.namespace, 'svc-ns');
  assert.equal(m.token, 'stored');
  assert.equal(merged.currentUserId(), 'u-1');
});

test('no context anywhere: requireCurrent says how to choose one', async () => {
  const { store } = setup({}, 'apiVersion: v1\nkind: Config\n');
  assert.equal(await store().current(), undefined);
  await assert.rejects(store().requireCurrent(), /no current context.*devtool context use <URL_OR_CLUSTER_CONTEXT>/);
});

test('a stored current context that left the kubeconfig is an error naming it', async () => {
  const { store, kc } = setup();
  await store().use('beta', { isDevtool: false });
  writeFileSync(kc, KUBECONFIG.replace(/- name: beta\n {2}context:\n {4}cluster: beta-cluster\n {4}user: beta-user\n {4}namespace: team\n/, ''));
  await assert.rejects(store().requireCurrent(), /the current context "beta" is no longer in the kubeconfig/);
});

test('a corrupt contexts.json is an error naming the file', async () => {
  const { store, home } = setup();
  assert.deepEqual(store().read(), { contexts: {} }, 'no home yet: nothing stored');
  await store().use('alpha', { isDevtool: false, namespace: 'x' });
  writeFileSync(home.contextsFile, '{"current": "alpha", ');
  assert.throws(
    () => store().read(),
    (err: Error) => err.message.startsWith(`${home.contextsFile}: cannot read the devtool contexts`),
  );
  await assert.rejects(store().requireCurrent(), /cannot read the devtool contexts/);
});

test('service URL normalization', () => {
  assert.equal(normalizeServiceUrl('devtool.example.com'), 'https://devtool.example.com');
  assert.equal(normalizeServiceUrl('https://devtool.example.com/'), 'https://devtool.example.com');
  assert.equal(normalizeServiceUrl('https://devtool.example.com///'), 'https://devtool.example.com');
  assert.equal(normalizeServiceUrl('HTTPS://Devtool.Example.com'), 'https://devtool.example.com');
  assert.equal(normalizeServiceUrl('http://localhost:8080/'), 'http://localhost:8080');
  assert.equal(normalizeServiceUrl('https://example.com:443/devtool/'), 'https://example.com/devtool');
  assert.ok(looksLikeUrl('https://x.example'));
  assert.ok(looksLikeUrl('devtool.example.com'));
  assert.ok(looksLikeUrl('http://localhost:8080'));
  assert.equal(looksLikeUrl('kind-devtool'), false);
  assert.equal(looksLikeUrl('alpha'), false);
});

test('select: the context --context names, whichever is current; none named: the current one; an unknown name is a usage error naming the flag', async () => {
  const { store } = setup();
  assert.equal((await store().select('beta')).name, 'beta');
  assert.equal((await store().select('beta')).namespace, 'team');
  assert.equal((await store().requireCurrent()).name, 'alpha', 'the current context is left as it was');
  assert.equal((await store().select(undefined)).name, 'alpha');
  await assert.rejects(
    store().select('gamma'),
    (err: Error) => err.name === 'UsageError' && /^--context: unknown context "gamma" \(known: alpha, beta\)/.test(err.message),
  );
});

test('a current service context is resolved without the kubeconfig: a broken one does not stand in its way', async () => {
  const { store, kc } = setup();
  await store().use('https://devtool.example', { isDevtool: true, token: 'dvt_x', namespace: 'web' });
  writeFileSync(kc, 'clusters: [\n  - : broken');
  const ctx = await store().requireCurrent();
  assert.deepEqual([ctx.name, ctx.source, ctx.namespace, ctx.token], ['https://devtool.example', 'stored', 'web', 'dvt_x']);
  // Listing every context still reads it, and says what is wrong with it.
  await assert.rejects(store().list(), /kubeconfig:2:3: invalid kubeconfig/);
});
