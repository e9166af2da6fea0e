/**
 * Compose deploys end to end: the built devtool deploys a multi-service Compose application to the local
 * cluster, the web service answers through its Service and through its Ingress rule and uses the
 * database by Service name, `endpoints` lists the URL, and `destroy` removes every object of the
 * environment (volumes only with --volumes).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDevtool, spawnDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, execInPod, imageFromFolder, REGISTRY, runningPod, type ClusterSandbox } from './cluster.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'shop');
const ENV = 'shop';
const DOMAIN = 'e2e.devtool.test';
let s: ClusterSandbox;
let webImage: string;

before(async () => {
  s = await clusterSandbox('e2e-compose');
  webImage = imageFromFolder('e2e-shop-web', fixture, `${REGISTRY}/node:20`, ['pg@8.13.1']);
});
after(async () => {
  if (s) await deleteNamespace(s);
});

function devtool(args: string[], timeoutMs = 60_000) {
  return runDevtool(args, {
    cwd: fixture,
    timeoutMs,
    env: { ...s.env, WEB_IMAGE: webImage, REGISTRY, DEVTOOL_ENDPOINT_DOMAIN: DOMAIN },
  });
}

async function environmentObjects(): Promise<string[]> {
  const selector = `devtool.dev/environment=${ENV}`;
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const batch = s.kc.makeApiClient(k8s.BatchV1Api);
  const net = s.kc.makeApiClient(k8s.NetworkingV1Api);
  const ns = s.namespace;
  const names = (kind: string, items: { metadata?: { name?: string } }[]) => items.map((i) => `${kind}/${i.metadata?.name}`);
  return [
    ...names('Deployment', (await apps.listNamespacedDeployment({ namespace: ns, labelSelector: selector })).items),
    ...names('StatefulSet', (await apps.listNamespacedStatefulSet({ namespace: ns, labelSelector: selector })).items),
    ...names('Job', (await batch.listNamespacedJob({ namespace: ns, labelSelector: selector })).items),
    ...names('Service', (await s.core.listNamespacedService({ namespace: ns, labelSelector: selector })).items),
    ...names('Ingress', (await net.listNamespacedIngress({ namespace: ns, labelSelector: selector })).items),
    ...names('PersistentVolumeClaim', (await s.core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector: selector })).items),
  ].sort();
}

test('deploy --wait brings up every service, in dependency order', { timeout: 600_000 }, async () => {
  const r = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--wait', '--timeout', '5m'], 420_000);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  const url = `https://${ENV}-${s.namespace}.${DOMAIN}`;
  assert.ok(r.stdout.includes(url), `deploy prints the endpoint URL ${url}; got ${r.stdout}`);
  for (const service of ['db', 'migrate', 'web', 'worker']) assert.match(r.stderr, new RegExp(`✓ ${service} (ready|completed)`));
  // depends_on order: db healthy before migrate runs, migrate done before web and worker start.
  const order = ['db: StatefulSet', 'migrate: Job', 'web: Deployment'].map((t) => r.stderr.indexOf(t));
  assert.ok(order.every((i) => i >= 0) && order[0]! < order[1]! && order[1]! < order[2]!, `rollout order in:\n${r.stderr}`);
  assert.deepEqual(await environmentObjects(), [
    'Deployment/web',
    'Deployment/worker',
    'Ingress/shop',
    'Job/migrate',
    'PersistentVolumeClaim/pgdata',
    'Service/db',
    'Service/web',
    'StatefulSet/db',
  ]);
});

test('the web service answers through its Service and its Ingress rule, using the database by name', { timeout: 120_000 }, async () => {
  const pod = await runningPod(s.core, s.namespace, 'devtool.dev/service=web');
  const fetchJson = (url: string) =>
    execInPod(s.kc, s.namespace, pod, ['node', '-e', `fetch(${JSON.stringify(url)}).then(r => r.text()).then(t => console.log(t))`]);
  const viaService = await fetchJson('http://web:8080/visit');
  assert.equal(viaService.code, 0, viaService.stderr);
  assert.equal(JSON.parse(viaService.stdout).web, 1, viaService.stdout);

  const net = s.kc.makeApiClient(k8s.NetworkingV1Api);
  const ingress = await net.readNamespacedIngress({ name: ENV, namespace: s.namespace });
  const rule = ingress.spec!.rules![0]!;
  assert.equal(rule.host, `${ENV}-${s.namespace}.${DOMAIN}`);
  const path = rule.http!.paths[0]!;
  const backend = path.backend.service!;
  const viaIngress = await fetchJson(`http://${backend.name}:${backend.port!.number}${path.path === '/' ? '/visit' : path.path}`);
  const counts = JSON.parse(viaIngress.stdout) as { web: number; worker?: number };
  assert.equal(counts.web, 2, viaIngress.stdout);
  assert.ok((counts.worker ?? 0) >= 1, `the worker writes too: ${viaIngress.stdout}`);
});

test('endpoints lists the public URL as text, json and md', { timeout: 60_000 }, async () => {
  const url = `https://${ENV}-${s.namespace}.${DOMAIN}`;
  const json = devtool(['endpoints', '--name', ENV, '--namespace', s.namespace, '--output', 'json']);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), [url]);
  const md = devtool(['endpoints', '--name', ENV, '--namespace', s.namespace, '-o', 'md']);
  assert.equal(md.stdout.trim(), `- [${url}](${url})`);
});

test('a second deploy with nothing changed succeeds and runs the migration again', { timeout: 420_000 }, async () => {
  const r = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--wait'], 360_000);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /✓ migrate completed/);
});

test('a redeploy with a healthy dependency unchanged does not wait for its route to settle again', { timeout: 300_000 }, async () => {
  // A dependency without a healthcheck: healthy is a pod accepting TCP, reached through its Service.
  // Names of their own: the namespace also holds the environment of the tests above (its web, its cache).
  const dir = mkdtempSync(join(tmpdir(), 'devtool-redeploy-'));
  writeFileSync(
    join(dir, 'compose.yaml'),
    [
      'services:',
      '  memo:',
      `    image: ${REGISTRY}/redis:7`,
      '    ports: ["6379"]',
      '  page:',
      `    image: ${REGISTRY}/nginx:1`,
      '    depends_on:',
      '      memo: { condition: service_healthy }',
      '',
    ].join('\n'),
  );
  const deploy = () => runDevtool(['deploy', '--name', 'redeploy', '--namespace', s.namespace], { cwd: dir, env: s.env, timeoutMs: 200_000 });
  const first = deploy();
  assert.equal(first.code, 0, first.stderr);
  // Long enough ago that every node routes to it (the deploy's rule: ready for 30 s).
  await new Promise((r) => setTimeout(r, 31_000));
  const proc = spawnDevtool(['deploy', '--name', 'redeploy', '--namespace', s.namespace], { cwd: dir, env: s.env });
  const seen: { line: string; at: number }[] = [];
  let partial = '';
  proc.stderr.on('data', (c: Buffer) => {
    const parts = (partial + c.toString()).split('\n');
    partial = parts.pop()!;
    for (const line of parts) seen.push({ line, at: Date.now() });
  });
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  const text = seen.map((x) => x.line).join('\n');
  assert.equal(code, 0, text);
  const waiting = seen.find((x) => x.line.includes('page: waiting for memo (service_healthy)'));
  const applied = seen.find((x) => x.line.includes('page: Deployment page applied'));
  assert.ok(waiting && applied, text);
  // One TCP check through a port-forward (1.5 s), not six polls of it (10-12 s).
  assert.ok(applied.at - waiting.at < 5_000, `waited ${applied.at - waiting.at} ms for a cache that was healthy all along`);
  // The next test counts the namespace's environment records: this one goes.
  const gone = runDevtool(['destroy', '--name', 'redeploy', '--namespace', s.namespace, '--wait'], { cwd: dir, env: s.env, timeoutMs: 200_000 });
  assert.equal(gone.code, 0, gone.stderr);
});

test('destroy keeps the volume; destroy --volumes removes it', { timeout: 300_000 }, async () => {
  const r = devtool(['destroy', '--name', ENV, '--namespace', s.namespace, '--wait'], 200_000);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /kept 1 volume\(s\): pgdata/);
  assert.deepEqual(await environmentObjects(), ['PersistentVolumeClaim/pgdata']);
  const state = await s.core.listNamespacedConfigMap({ namespace: s.namespace, labelSelector: 'devtool.dev/environment-state' });
  assert.equal(state.items.length, 0, 'the environment record is gone');

  const all = devtool(['destroy', '--name', ENV, '--namespace', s.namespace, '--volumes', '--wait'], 200_000);
  assert.equal(all.code, 0, all.stderr);
  assert.deepEqual(await environmentObjects(), []);
});
