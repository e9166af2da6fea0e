/**
 * The original watcher of `up` on the local cluster: while `up` runs, a change of the original's
 * pod template (what `kubectl set env` does) reaches the dev pod, with the manifest's overrides
 * still winning; a redeploy of the original (replicas above zero) is scaled back to zero with the
 * new count recorded, which `down` then restores; and a `down` during `up` is not fought.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { clusterSandbox, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
let folder: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  s = await clusterSandbox('dev-watch');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name: 'api', labels: { app: 'api' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'api' } },
        template: {
          metadata: { labels: { app: 'api' } },
          spec: {
            containers: [{ name: 'api', image: `${REGISTRY}/debian:bookworm`, command: ['sleep', 'infinity'], env: [{ name: 'FROM_ORIGINAL', value: 'yes' }] }],
          },
        },
      },
    },
  });
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    environment: {FROM_MANIFEST: "1"}\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, [folder]));

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
const original = () => apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });

async function waitFor(what: string, cond: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not met in ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The one dev pod, once it is running and ready (none terminating beside it). */
async function soleReadyDevPod(): Promise<k8s.V1Pod | undefined> {
  const pods = (await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: 'devtool.dev/dev-pod=api' })).items;
  const [pod] = pods;
  if (pods.length !== 1 || !pod || pod.metadata?.deletionTimestamp || pod.status?.phase !== 'Running') return undefined;
  return (pod.status.containerStatuses ?? []).every((c) => c.ready) ? pod : undefined;
}

test('up follows the original: set env reaches the dev pod, a redeploy is scaled back and recorded, down is not fought', { timeout: 540_000 }, async () => {
  const { proc, output: out } = await startUp(['-n', s.namespace], { env, cwd: folder });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const firstPod = (await soleReadyDevPod())?.metadata?.name;
  assert.ok(firstPod, 'a dev pod after up');

  // What `kubectl set env deployment/api FOO=bar FROM_MANIFEST=from-original` sends: a strategic
  // merge patch of the container's env (merged by name).
  await apps.patchNamespacedDeployment(
    {
      name: 'api',
      namespace: s.namespace,
      body: {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'api',
                  env: [
                    { name: 'FOO', value: 'bar' },
                    { name: 'FROM_MANIFEST', value: 'from-original' },
                  ],
                },
              ],
            },
          },
        },
      },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
  );
  await waitFor('a new dev pod with FOO=bar', async () => {
    const pod = await soleReadyDevPod();
    return !!pod && pod.metadata?.name !== firstPod && !!pod.spec?.containers.some((c) => c.env?.some((e) => e.name === 'FOO' && e.value === 'bar'));
  });
  assert.match(out(), /! deployment api changed: dev container api-devtool updated to match/);
  const e = dev(['exec', '--', 'sh', '-c', 'echo $FOO $FROM_MANIFEST $FROM_ORIGINAL']);
  assert.equal(e.code, 0, e.stderr);
  // The original's new variable arrives; the manifest's override still wins over the original's.
  assert.equal(e.stdout.trim(), 'bar 1 yes');
  assert.equal((await original()).spec?.replicas, 0, 'the original stays scaled down');

  // A redeploy: the user's deploy applies the original with replicas: 2.
  await apps.patchNamespacedDeployment(
    { name: 'api', namespace: s.namespace, body: { spec: { replicas: 2 } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  await waitFor(
    'the original scaled back to 0 with 2 recorded, and a notice',
    async () => {
      const o = await original();
      return (
        o.spec?.replicas === 0 &&
        o.metadata?.annotations?.['devtool.dev/dev-replicas'] === '2' &&
        out().includes('! deployment api was redeployed with 2 replicas')
      );
    },
    60_000,
  );
  assert.match(out(), /! deployment api was redeployed with 2 replicas: scaled back to 0 while the dev container is active \('devtool down' restores 2\)/);
  // The dev pod was not touched by a change of replicas only.
  const pod = await soleReadyDevPod();
  assert.ok(pod);

  // down while up (and its watcher) still runs: the original gets its 2 replicas and keeps them.
  const down = dev(['down'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  assert.doesNotMatch(down.stderr, /changed while in dev mode/, 'the redeploy was recorded: down has nothing to warn about');
  assert.equal(await exited, 0, 'up ends cleanly on the SIGTERM down sends');
  await new Promise((r) => setTimeout(r, 3000));
  const restored = await original();
  assert.equal(restored.spec?.replicas, 2);
  assert.deepEqual(
    Object.keys(restored.metadata?.annotations ?? {}).filter((k) => k.startsWith('devtool.dev/')),
    [],
  );
  assert.ok(
    restored.spec?.template.spec?.containers[0]?.env?.some((x) => x.name === 'FOO' && x.value === 'bar'),
    'the original keeps its own change',
  );
  await assert.rejects(apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace }));
});

test('a down while the watcher keeps running: the original keeps the replicas down gave it, the mirror stays deleted', { timeout: 420_000 }, async () => {
  const { proc, output: out } = await startUp(['-n', s.namespace], { env, cwd: folder });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  assert.equal((await original()).spec?.replicas, 0);
  // `down` from the same folder, but with another devtool home: it restores the cluster as usual
  // and cannot signal this `up`, whose watcher then sees everything down did and must not undo it.
  const other = { ...env, DEVTOOL_HOME: join(s.root, 'other-devtool-home') };
  const down = runDevtool(['down', '-n', s.namespace], { env: other, cwd: folder, timeoutMs: 120_000 });
  assert.equal(down.code, 0, down.stderr);
  assert.equal(proc.exitCode, null, 'up is still running');
  await new Promise((r) => setTimeout(r, 8000));
  const o = await original();
  assert.equal(o.spec?.replicas, 2, `the watcher left the restored original alone:\n${out()}`);
  assert.equal(o.metadata?.annotations?.['devtool.dev/dev-replicas'], undefined);
  await assert.rejects(apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace }), 'the mirror down deleted was not recreated');
  assert.doesNotMatch(out(), /redeployed|recreated|updated to match/);
  proc.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('a dev container of another folder: up and down there are refused naming it; once that folder is deleted, down here takes over', {
  timeout: 420_000,
}, async () => {
  const oldClone = join(s.root, 'old-clone');
  mkdirSync(oldClone);
  writeFileSync(join(oldClone, 'devtool.yml'), 'services:\n  api: {}\n');
  const { proc } = await startUp(['-n', s.namespace], { env, cwd: oldClone });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const replicas = (await original()).metadata?.annotations?.['devtool.dev/dev-replicas'];

  const refusedDown = dev(['down']);
  assert.equal(refusedDown.code, 1, refusedDown.stderr);
  assert.match(refusedDown.stderr, new RegExp(`api was activated from folder ${oldClone}: run 'devtool down' there`));
  const refusedUp = dev(['up'], 120_000);
  assert.notEqual(refusedUp.code, 0);
  assert.match(
    refusedUp.stderr,
    new RegExp(
      `api is already in development from folder ${oldClone} \\(deployment api-devtool in namespace ${s.namespace}\\); run 'devtool down' there first`,
    ),
  );
  assert.equal((await original()).spec?.replicas, 0, 'nothing changed');

  // The clone is deleted while its `up` still runs (as a terminal left open in it would).
  rmSync(oldClone, { recursive: true });
  const refusedAgain = dev(['up'], 120_000);
  assert.match(refusedAgain.stderr, new RegExp(`from folder ${oldClone} \\(which no longer exists\\) .*; run 'devtool down' here to take it over`));
  const down = dev(['down'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, new RegExp(`api was activated from folder ${oldClone} \\(which no longer exists\\): taking it over from here`));
  assert.match(down.stderr, /stopped 'devtool up' \(pid \d+\)/);
  assert.equal(await exited, 0, "the deleted folder's up was ended");
  const o = await original();
  assert.equal(String(o.spec?.replicas), replicas, 'the recorded replicas are back');
  assert.deepEqual(
    Object.keys(o.metadata?.annotations ?? {}).filter((k) => k.startsWith('devtool.dev/')),
    [],
  );
  await assert.rejects(apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace }));
});
