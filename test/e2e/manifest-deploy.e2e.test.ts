/**
 * Issue 5 end to end: a manifest whose deploy commands are plain kubectl (apply of a folder, and
 * `kubectl create secret`) and a shell command making an "external resource" (a file). Everything
 * the commands create carries the environment label (the labelling proxy), the state ConfigMap says
 * deployed; a failing command stops the deploy with its exit code and records `error`; destroy runs
 * the destroy command (the file goes) and leaves no object of the environment.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, type ClusterSandbox } from './cluster.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'manifest-app');
const ENV = 'manifest-app';
const LABEL = 'devtool.dev/environment';
let s: ClusterSandbox;
let external: string;

before(async () => {
  s = await clusterSandbox('e2e-manifest');
  external = mkdtempSync(join(tmpdir(), 'devtool-external-'));
});
after(async () => {
  if (s) await deleteNamespace(s);
  if (external) rmSync(external, { recursive: true, force: true });
});

function devtool(args: string[], timeoutMs = 120_000) {
  return runDevtool(args, { cwd: fixture, timeoutMs, env: { ...s.env, APP_TOKEN: 's3cret' } });
}

async function labelled(env: string): Promise<string[]> {
  const selector = `${LABEL}=${env}`;
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const ns = s.namespace;
  const names = (kind: string, items: { metadata?: { name?: string } }[]) => items.map((i) => `${kind}/${i.metadata?.name}`);
  return [
    ...names('Deployment', (await apps.listNamespacedDeployment({ namespace: ns, labelSelector: selector })).items),
    ...names('ReplicaSet', (await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: selector })).items),
    ...names('Service', (await s.core.listNamespacedService({ namespace: ns, labelSelector: selector })).items),
    ...names('ConfigMap', (await s.core.listNamespacedConfigMap({ namespace: ns, labelSelector: selector })).items),
    ...names('Secret', (await s.core.listNamespacedSecret({ namespace: ns, labelSelector: selector })).items),
  ].sort();
}

async function state(env: string): Promise<Record<string, string>> {
  return (await s.core.readNamespacedConfigMap({ name: `devtool-env-${env}`, namespace: s.namespace })).data ?? {};
}

test('deploy runs the commands through the labelling proxy and records the environment', { timeout: 300_000 }, async () => {
  const r = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--var', `EXTERNAL_DIR=${external}`]);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  assert.match(r.stderr, /\[apply\] deployment\.apps\/web created/);
  assert.match(r.stderr, /\[secret\] secret\/app-token created/);
  assert.match(r.stderr, /✓ environment manifest-app deployed/);
  assert.equal(readFileSync(join(external, 'resource'), 'utf8'), `${ENV} in ${s.namespace}\n`, 'the documented variables reach the commands');

  const objects = await labelled(ENV);
  for (const o of ['Deployment/web', 'Service/web', 'ConfigMap/web-config']) assert.ok(objects.includes(o), `${o} carries the label; labelled: ${objects.join(', ')}`);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const web = await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace });
  assert.equal(web.spec?.template.metadata?.labels?.[LABEL], ENV, 'pod templates are labelled too');
  assert.equal(web.metadata?.labels?.['app'], 'web', 'labels of the manifest are kept');

  const st = await state(ENV);
  assert.equal(st['status'], 'deployed');
  assert.equal(st['source'], 'manifest');
  assert.match(st['manifest'] ?? '', /kubectl apply -f k8s\//);
  assert.deepEqual(JSON.parse(st['variables'] ?? '{}'), { EXTERNAL_DIR: external });
  assert.match(st['output'] ?? '', /\[apply\] service\/web created/);
});

// Known gap: kubectl sends `create` of core kinds as protobuf, which the proxy forwards unlabelled
// (with a warning naming the request). Labelling needs a protobuf ObjectMeta rewrite in the proxy.
test('objects made by `kubectl create` (protobuf bodies) carry the label', { todo: 'protobuf request bodies are not labelled yet' }, async () => {
  assert.ok((await labelled(ENV)).includes('Secret/app-token'));
});

test('a failing command stops the deploy with its exit code, and the state says error', { timeout: 120_000 }, async () => {
  const r = devtool(['deploy', '--file', 'devtool-fail.yml', '--name', 'failing', '--namespace', s.namespace]);
  assert.equal(r.code, 1, r.stderr);
  const last = r.stderr.trim().split('\n').pop()!;
  assert.match(last, /deploy command "broken" failed with exit code 7/);
  assert.match(r.stderr, /\[broken\] about to fail/);
  assert.doesNotMatch(r.stderr, /running never/);
  const st = await state('failing');
  assert.equal(st['status'], 'error');
  assert.match(st['error'] ?? '', /exit code 7/);
  assert.deepEqual(await labelled('failing'), ['ConfigMap/fail-first']);
});

test('destroy runs the destroy commands, then removes every object of the environment', { timeout: 300_000 }, async () => {
  assert.ok(existsSync(join(external, 'resource')));
  const r = devtool(['destroy', '--name', ENV, '--namespace', s.namespace, '--wait']);
  assert.equal(r.code, 0, `destroy failed:\n${r.stderr}`);
  assert.match(r.stderr, /✓ remove external/);
  assert.ok(!existsSync(join(external, 'resource')), 'the destroy command removed the external resource (with the variables of the deploy)');
  assert.deepEqual(await labelled(ENV), []);
  await assert.rejects(state(ENV), 'the state record is gone');
});
