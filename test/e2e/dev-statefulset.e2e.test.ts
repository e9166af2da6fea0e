/**
 * `up`, `exec` and `down` on a StatefulSet on the local cluster: two replicas with a
 * volumeClaimTemplate, whose first pod wrote a file into its volume. The dev pod inherits that
 * volume (pod-0's claim), pod-0's host name and DNS name, a local edit syncs in, the original watch
 * follows the StatefulSet, and `down` gives the
 * StatefulSet back exactly as it was, its pod-0 running again on the same data (and what the dev
 * container wrote there). Plus the one-line refusals: a Deployment and a StatefulSet of one name,
 * and a StatefulSet that deletes its claims when scaled down.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lines, runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, execInPod, REGISTRY, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
let folder: string;
let env: NodeJS.ProcessEnv;
let before_: k8s.V1StatefulSet;

/** Writes the file once (its first start), then idles: what a database does with its data folder, in small. */
const APP = 'test -f /data/hello.txt || echo "written by $(hostname)" > /data/hello.txt; exec sleep infinity';

function statefulSet(name: string, replicas: number, over: Partial<k8s.V1StatefulSetSpec> = {}): k8s.V1StatefulSet {
  return {
    metadata: { name, labels: { app: name }, annotations: { 'example.com/owner': 'storage-team' } },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'app', image: `${REGISTRY}/debian:bookworm`, command: ['sh', '-c', APP], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } }],
      ...over,
    },
  };
}

before(async () => {
  s = await clusterSandbox('dev-sts');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  // The headless Service that gives the StatefulSet's pods their DNS names.
  await s.core.createNamespacedService({
    namespace: s.namespace,
    body: { metadata: { name: 'db' }, spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 5432 }] } },
  });
  await apps.createNamespacedStatefulSet({ namespace: s.namespace, body: statefulSet('db', 2) });
  await waitFor(
    'statefulset db ready with 2 replicas',
    async () => (await apps.readNamespacedStatefulSet({ name: 'db', namespace: s.namespace })).status?.readyReplicas === 2,
    180_000,
  );
  const wrote = await execInPod(s.kc, s.namespace, 'db-0', ['cat', '/data/hello.txt']);
  assert.equal(wrote.stdout, 'written by db-0\n', wrote.stderr);
  before_ = await apps.readNamespacedStatefulSet({ name: 'db', namespace: s.namespace });
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'devtool.yml'),
    'services:\n  db:\n    sync: [".:/src"]\n  twin:\n    sync: [".:/src"]\n  careless:\n    sync: [".:/src"]\n  fresh:\n    sync: [".:/src"]\n',
  );
  writeFileSync(join(folder, 'main.sh'), 'echo one\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, []));

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
const inContainer = (script: string) => dev(['exec', 'db', '--', 'sh', '-c', script]);

test('up on a StatefulSet: its data is there, sync and exec work; down gives it back exactly, pod-0 on the same data', { timeout: 480_000 }, async () => {
  const { output } = await startUp(['db', '-n', s.namespace], { env, cwd: folder });
  assert.match(output(), /scaling statefulset db to 0 \(its replicas are recorded for 'devtool down'\)/);
  assert.match(output(), /dev container db-devtool is ready/);

  const scaled = await apps.readNamespacedStatefulSet({ name: 'db', namespace: s.namespace });
  assert.equal(scaled.spec?.replicas, 0);
  assert.equal(scaled.metadata?.annotations?.['devtool.dev/dev-replicas'], '2');
  const mirror = await apps.readNamespacedDeployment({ name: 'db-devtool', namespace: s.namespace });
  assert.equal(mirror.spec?.template.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName, 'data-db-0');

  // pod-0's data, where the app had it, under pod-0's host name.
  const e = inContainer('cat /data/hello.txt; hostname; exit 7');
  assert.equal(e.code, 7, e.stderr);
  assert.equal(e.stdout, 'written by db-0\ndb-0\n');

  // pod-0's DNS name (through the headless Service) reaches the dev pod.
  const ip = inContainer('hostname -i').stdout.trim();
  await waitFor('db-0.db resolving to the dev pod', async () => inContainer('getent hosts db-0.db').stdout.startsWith(`${ip} `), 60_000);

  // A local edit reaches the dev container.
  writeFileSync(join(folder, 'main.sh'), 'echo two\n');
  await waitFor('the local edit in the dev container', async () => inContainer('cat /src/main.sh').stdout === 'echo two\n', 60_000);
  // The original watch follows a StatefulSet as it follows a Deployment: a new template rebuilds the
  // dev pod (and going back rebuilds it again), a redeploy (GitOps, `kubectl scale`) is scaled back.
  const patch = (body: object) =>
    apps.patchNamespacedStatefulSet({ name: 'db', namespace: s.namespace, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch));
  await patch([{ op: 'add', path: '/spec/template/spec/containers/0/env', value: [{ name: 'FROM_ORIGINAL', value: 'new' }] }]);
  await waitFor('the dev pod with the new template', async () => inContainer('echo $FROM_ORIGINAL').stdout === 'new\n', 120_000);
  assert.match(output(), /! statefulset db changed: dev container db-devtool updated to match/);
  await patch([{ op: 'remove', path: '/spec/template/spec/containers/0/env' }]);
  await waitFor('the dev pod with the template as before', async () => inContainer('echo "[$FROM_ORIGINAL]"').stdout === '[]\n', 120_000);
  await patch([{ op: 'replace', path: '/spec/replicas', value: 2 }]);
  await waitFor('the redeploy scaled back', async () => output().includes('! statefulset db was redeployed with 2 replicas: scaled back to 0'));
  await waitFor('statefulset db at 0 again', async () => (await apps.readNamespacedStatefulSet({ name: 'db', namespace: s.namespace })).spec?.replicas === 0);
  await waitFor('the dev container answering again', async () => inContainer('cat /data/hello.txt').stdout === 'written by db-0\n', 120_000);

  // What the developer writes into the data stays with the StatefulSet.
  assert.equal(inContainer('echo "written in dev mode" > /data/dev.txt').code, 0);

  // `down` while `up` runs: it stops it, and the StatefulSet is back as it was.
  const down = dev(['down', 'db', '--volumes'], 180_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, /statefulset db restored to 2 replicas/);
  const restored = await apps.readNamespacedStatefulSet({ name: 'db', namespace: s.namespace });
  assert.deepEqual(comparable(restored), comparable(before_));
  await assert.rejects(apps.readNamespacedDeployment({ name: 'db-devtool', namespace: s.namespace }));
  // pod-0's claim is the StatefulSet's: never deleted, not even by --volumes.
  await s.core.readNamespacedPersistentVolumeClaim({ name: 'data-db-0', namespace: s.namespace });

  await waitFor(
    'statefulset db ready again',
    async () => (await apps.readNamespacedStatefulSet({ name: 'db', namespace: s.namespace })).status?.readyReplicas === 2,
    180_000,
  );
  const data = await execInPod(s.kc, s.namespace, 'db-0', ['cat', '/data/hello.txt', '/data/dev.txt']);
  assert.equal(data.stdout, 'written by db-0\nwritten in dev mode\n', data.stderr);
});

test('a StatefulSet that never ran its first pod: up creates its claim as the controller would, and the StatefulSet adopts it', {
  timeout: 300_000,
}, async () => {
  await apps.createNamespacedStatefulSet({ namespace: s.namespace, body: statefulSet('fresh', 0) });
  const { output } = await startUp(['fresh', '-n', s.namespace], { env, cwd: folder });
  assert.match(output(), /creating persistent volume claim data-fresh-0 \(statefulset fresh has not created it yet; it keeps it afterwards\)/);
  const claim = await s.core.readNamespacedPersistentVolumeClaim({ name: 'data-fresh-0', namespace: s.namespace });
  assert.equal(claim.metadata?.labels?.app, 'fresh');
  const w = dev(['exec', 'fresh', '--', 'sh', '-c', 'echo "seeded in dev mode" > /data/hello.txt']);
  assert.equal(w.code, 0, w.stderr);
  const down = dev(['down', 'fresh'], 180_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, /statefulset fresh restored to 0 replicas/);
  await apps.patchNamespacedStatefulSet(
    { name: 'fresh', namespace: s.namespace, body: { spec: { replicas: 1 } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  await waitFor(
    'statefulset fresh ready',
    async () => (await apps.readNamespacedStatefulSet({ name: 'fresh', namespace: s.namespace })).status?.readyReplicas === 1,
    180_000,
  );
  const data = await execInPod(s.kc, s.namespace, 'fresh-0', ['cat', '/data/hello.txt']);
  assert.equal(data.stdout, 'seeded in dev mode\n', data.stderr);
});

test('a Deployment and a StatefulSet of one name: one line naming both, nothing changed', { timeout: 120_000 }, async () => {
  await createSleepingDeployment(s, 'twin');
  await apps.createNamespacedStatefulSet({ namespace: s.namespace, body: statefulSet('twin', 0) });
  const r = dev(['up', 'twin']);
  assert.equal(r.code, 1);
  // What up would sync is said first; then the one line of the error.
  assert.deepEqual(lines(r.stderr).slice(1), [
    `Error: services.twin names 2 workloads in namespace ${s.namespace} (deployment twin, statefulset twin): ` +
      'set services.twin.selector to labels that only the one to develop has',
  ]);
  assert.equal((await apps.readNamespacedDeployment({ name: 'twin', namespace: s.namespace })).spec?.replicas, 1);
  await assert.rejects(apps.readNamespacedDeployment({ name: 'twin-devtool', namespace: s.namespace }));
});

test('a StatefulSet that deletes its claims when scaled down is refused before anything changes', { timeout: 120_000 }, async () => {
  const body = statefulSet('careless', 1, { persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Retain' } });
  await apps.createNamespacedStatefulSet({ namespace: s.namespace, body });
  const r = dev(['up', 'careless']);
  assert.equal(r.code, 1);
  assert.deepEqual(lines(r.stderr).slice(1), [
    'Error: statefulset careless deletes its claims when scaled down (persistentVolumeClaimRetentionPolicy.whenScaled: Delete), ' +
      "so scaling it to 0 for 'devtool up' would delete its data: set whenScaled: Retain on it first",
  ]);
  const after_ = await apps.readNamespacedStatefulSet({ name: 'careless', namespace: s.namespace });
  assert.equal(after_.spec?.replicas, 1);
  assert.equal(after_.metadata?.annotations?.['devtool.dev/dev-replicas'], undefined);
  await assert.rejects(apps.readNamespacedDeployment({ name: 'careless-devtool', namespace: s.namespace }));
});

/** The object as its owner wrote it: without what the API server keeps changing. */
function comparable(o: k8s.V1StatefulSet): unknown {
  const { resourceVersion: _rv, generation: _g, managedFields: _mf, ...metadata } = o.metadata ?? {};
  return { metadata, spec: o.spec };
}

async function waitFor(what: string, cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
