/**
 * A dev container left active by another devtool version, met by the built CLI: `up` activates
 * one, then its dev Deployment is rewritten as an older `up` would have left it (an older version
 * recorded, another spec hash on it and its pod template), and `status`, `up` and `down` run on
 * it; then as a newer version would have left it, which `up` refuses and `down` restores.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lines, runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const OLDER = `${VERSION}-rc.1`;
const NEWER = '99.0.0';

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
let folder: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  s = await clusterSandbox('upg-dev');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  await createSleepingDeployment(s, 'api');
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  writeFileSync(join(folder, 'kept.txt'), 'synced before the upgrade\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, [folder]));

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
const mirror = () => apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace });
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** The dev pod that runs and is ready, if one is. */
async function readyPod(): Promise<k8s.V1Pod | undefined> {
  const pods = await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: 'devtool.dev/dev-pod=api' });
  return pods.items.find((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready));
}

/**
 * The dev Deployment as another version's `up` leaves it: that version recorded, and a spec hash
 * of its own on it and its pod template (so its dev pod is one that version started). Resolves
 * once that pod is ready.
 */
async function leftBy(version: string, specHash: string): Promise<string> {
  await apps.patchNamespacedDeployment(
    {
      name: 'api-devtool',
      namespace: s.namespace,
      body: {
        metadata: { annotations: { 'devtool.dev/dev-version': version, 'devtool.dev/dev-spec-hash': specHash } },
        spec: { template: { metadata: { annotations: { 'devtool.dev/dev-spec-hash': specHash } } } },
      },
    },
    mergePatch,
  );
  let pod: string | undefined;
  await waitFor(
    `a dev pod of the spec ${specHash}`,
    async () => {
      const p = await readyPod();
      pod = p?.metadata?.annotations?.['devtool.dev/dev-spec-hash'] === specHash ? p.metadata.name : undefined;
      return pod !== undefined;
    },
    120_000,
  );
  return pod!;
}

test(`an older dev container: status reads the running up, up replaces its pod, down restores`, { timeout: 600_000 }, async () => {
  let session = await startUp(['-n', s.namespace], { env, cwd: folder });
  assert.equal((await mirror()).metadata?.annotations?.['devtool.dev/dev-version'], VERSION, 'up records its version');
  await session.stop();

  const olderPod = await leftBy(OLDER, '0123456789abcdef');
  session = await startUp(['-n', s.namespace], { env, cwd: folder });
  assert.match(
    session.output(),
    new RegExp(`dev container api was started by devtool ${OLDER.replaceAll('.', '\\.')}: its pod is replaced by one of devtool ${VERSION}`),
  );
  const replaced = await mirror();
  assert.equal(replaced.metadata?.annotations?.['devtool.dev/dev-version'], VERSION);
  // The API server may say ready a moment after up does (its agent answered first).
  await waitFor(
    `a dev pod other than ${olderPod}, of this version's spec`,
    async () => {
      const p = await readyPod();
      const hash = p?.metadata?.annotations?.['devtool.dev/dev-spec-hash'];
      return p !== undefined && p.metadata?.name !== olderPod && hash === replaced.metadata?.annotations?.['devtool.dev/dev-spec-hash'];
    },
    60_000,
  );
  // The volume stayed: the file synced before is there, and the sync goes on.
  const kept = dev(['exec', '--', 'cat', '/app/kept.txt']);
  assert.equal(kept.stdout, 'synced before the upgrade\n', kept.stderr);
  await waitFor('status to report the sync', () => dev(['status']).stdout.trim() === 'Synchronization status: 100.00%', 60_000);
  await session.stop();

  const down = dev(['down'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  assert.equal((await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).spec?.replicas, 1);
  await assert.rejects(mirror());
});

test('a newer dev container: up refuses in one line and changes nothing, down restores it', { timeout: 600_000 }, async () => {
  const session = await startUp(['-n', s.namespace], { env, cwd: folder });
  await session.stop();
  const newerPod = await leftBy(NEWER, 'fedcba9876543210');

  const up = dev(['up'], 120_000);
  assert.equal(up.code, 1, up.stderr);
  assert.equal(
    lines(up.stderr).at(-1),
    `Error: dev container api was started by devtool ${NEWER}, newer than this CLI (${VERSION}): install devtool ${NEWER} to go on with it, ` +
      "or run 'devtool down api' and then 'devtool up api' to start it again with this one",
  );
  assert.equal((await mirror()).metadata?.annotations?.['devtool.dev/dev-version'], NEWER);
  assert.equal((await readyPod())?.metadata?.name, newerPod, 'the dev pod is left as it was');
  assert.equal((await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).spec?.replicas, 0);

  const status = dev(['status']);
  assert.equal(status.code, 1);
  assert.deepEqual(lines(status.stderr).length, 1, status.stderr);

  const down = dev(['down'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  assert.equal((await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).spec?.replicas, 1);
  await assert.rejects(mirror());
});
