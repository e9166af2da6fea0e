/**
 * A dev pod the scheduler cannot place at first (src/kube/scheduling.ts). The original Deployment
 * asks for nodes with a label of this test's own; the node loses it once the original runs, so the
 * dev pod, which keeps the original's nodeSelector, is unschedulable. `up` waits while that may
 * still change (an autoscaler's window) and goes on once the node has the label again; when it never
 * does, `up` fails in one line with the scheduler's reason instead of running out its timeout.
 * The label is this test's alone: the parallel tests' pods never ask for it.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lines, runDevtool } from './cli.ts';
import { killUpSessions, startUp, tearDownDev, type UpSession } from './up-session.ts';
import { waitFor } from './wait.ts';
import { clusterSandbox, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let env: NodeJS.ProcessEnv;
let folder: string;
let node: string;
let label: string;

async function setNodeLabel(value: string | null): Promise<void> {
  await s.core.patchNode(
    { name: node, body: { metadata: { labels: { [label]: value } } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

before(async () => {
  s = await clusterSandbox('dev-sched');
  node = (await s.core.listNode()).items[0]!.metadata!.name!;
  label = `e2e.devtool.dev/${s.namespace}`;
  await setNodeLabel('yes');
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const labels = { app: 'api' };
  await apps.createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name: 'api', labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { nodeSelector: { [label]: 'yes' }, containers: [{ name: 'api', image: `${REGISTRY}/debian:bookworm`, command: ['sleep', 'infinity'] }] },
        },
      },
    },
  });
  await waitFor(
    'the original pod running',
    async () => (await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).status?.readyReplicas === 1,
    120_000,
  );
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n    persistentVolume: {enabled: false}\n');
  writeFileSync(join(folder, 'hello.txt'), 'hello\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(async () => {
  if (node) await setNodeLabel(null).catch(() => undefined);
  await tearDownDev(s, env, folder ? [folder] : []);
});

test('a dev pod waits while it cannot be scheduled, and starts once a node fits', { timeout: 300_000 }, async () => {
  await setNodeLabel(null);
  const started = Date.now();
  const upSession = startUp(['-n', s.namespace], { env, cwd: folder });
  const log = join(env.DEVTOOL_HOME!, 'devtool.log');
  const waiting = /dev container api-devtool: .*waiting to be scheduled: 0\/1 nodes are available: 1 node\(s\) didn't match/;
  let up: UpSession;
  try {
    await waitFor('up waiting to be scheduled', () => existsSync(log) && waiting.test(readFileSync(log, 'utf8')), 60_000);
    // Well within the autoscaler window: a node that fits arrives.
    await new Promise((r) => setTimeout(r, 3_000));
    await setNodeLabel('yes');
    up = await upSession;
  } catch (err) {
    killUpSessions();
    throw err;
  }
  assert.ok(Date.now() - started > 3_000);
  const cat = runDevtool(['exec', '-n', s.namespace, '--', 'cat', '/app/hello.txt'], { env, cwd: folder });
  assert.equal(cat.stdout, 'hello\n', cat.stderr);
  await up.stop();
  assert.equal(runDevtool(['down', '-n', s.namespace], { env, cwd: folder, timeoutMs: 120_000 }).code, 0);
});

test('a dev pod that no node will take fails in one line with the scheduler reason, after the autoscaler window', { timeout: 300_000 }, async () => {
  await setNodeLabel(null);
  const started = Date.now();
  const r = runDevtool(['up', '-n', s.namespace], { env, cwd: folder, timeoutMs: 240_000 });
  const took = Date.now() - started;
  assert.equal(r.code, 1, r.stderr);
  const errors = lines(r.stderr).filter((l) => l.startsWith('Error:'));
  assert.equal(errors.length, 1, r.stderr);
  assert.match(
    errors[0]!,
    /^Error: dev container api-devtool failed: pod cannot be scheduled: 0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector/,
  );
  assert.ok(took >= 15_000, `failed after ${took} ms: the autoscaler window is 15 s`);
  assert.ok(took < 120_000, `failed after ${took} ms, long before the timeout`);
  assert.equal(runDevtool(['down', '-n', s.namespace], { env, cwd: folder, timeoutMs: 120_000 }).code, 0);
});
