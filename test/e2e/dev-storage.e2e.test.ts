/**
 * A non-root image under Pod Security `restricted` on the storage people have
 * (docs/dev-containers.md, "Storage that ignores fsGroup"; docs/clusters.md): on the local
 * cluster's default storage (Rancher's local-path-provisioner, as kind and k3s ship it: folders
 * 0777, fsGroup not applied) `up` keeps the dev container's files on its claim across a restart of
 * the dev pod; on storage whose folders stay root's 0750 (the host-path class `standard`) `up` works
 * all the same, with the files in an emptyDir, and says so in one line.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { lines } from './cli.ts';
import { compliant, lockedDownApp, sleeper, tearDownLockedDown, uid1000Image, type LockedDownApp } from './locked-down.ts';
import { startUp, type UpSession } from './up-session.ts';
import { waitFor } from './wait.ts';

after(tearDownLockedDown);

/** A uid-1000 image with no home, admitted under `restricted`, syncing the folder to /app with `manifest`'s dev section. */
const uid1000App = (manifest: string) =>
  lockedDownApp(
    'dev-storage',
    'restricted',
    { securityContext: { runAsNonRoot: true }, containers: [sleeper(uid1000Image(), { ...compliant, seccompProfile: { type: 'RuntimeDefault' } })] },
    manifest,
  );

const NOTICE = new RegExp(
  "^claim api-devtool \\(storage class standard\\) is not writable by the dev container's user \\(its storage ignores fsGroup\\): " +
    '.* emptyDir .*lost when its pod restarts; .*set services\\.api\\.persistentVolume\\.storageClass to a class that applies fsGroup',
);

/** The notice lines `up` printed (with their progress mark stripped). */
const notices = (up: UpSession) =>
  lines(up.output())
    .map((l) => l.replace(/^\W+\s*/, ''))
    .filter((l) => l.startsWith('claim api-devtool'));

/** Edits both ways, as uid 1000: the laptop's file there, the container's file here, a later edit there. */
async function editsSyncBothWays(c: LockedDownApp, tag: string): Promise<void> {
  const { folder, dev } = c;
  const there = dev(['exec', '--', 'sh', '-c', `id -u; stat -c %u /app/from-laptop.txt; echo ${tag} > /app/from-container-${tag}.txt`]);
  assert.equal(there.code, 0, there.stderr);
  assert.deepEqual(there.stdout.trim().split('\n'), ['1000', '1000']);
  const here = join(folder, `from-container-${tag}.txt`);
  // Up to a minute: after a restart, `up` reconnects to the new dev pod first.
  await waitFor(`from-container-${tag}.txt here`, () => existsSync(here) && readFileSync(here, 'utf8') === `${tag}\n`, 60_000);
  writeFileSync(join(folder, `later-${tag}.txt`), `${tag}\n`);
  await waitFor(`later-${tag}.txt there`, () => dev(['exec', '--', 'cat', `/app/later-${tag}.txt`]).stdout === `${tag}\n`, 60_000);
}

/** `devtool restart` while `up` runs: a new dev pod, which `up` reconnects to; returns its name. */
async function restartDevPod(c: LockedDownApp): Promise<string> {
  const before = c.dev(['exec', '--', 'sh', '-c', 'echo $HOSTNAME']).stdout.trim();
  const r = c.dev(['restart'], 360_000);
  assert.equal(r.code, 0, r.stderr);
  const now = c.dev(['exec', '--', 'sh', '-c', 'echo $HOSTNAME']).stdout.trim();
  assert.notEqual(now, before, 'a new dev pod');
  return now;
}

/** A file on the dev container's volume outside the synced folders: kept across pods only by a claim. */
const KEPT = '/var/devtool/home/kept.txt';

test('default storage: a uid-1000 image under restricted syncs both ways and keeps its files across a dev pod restart', {
  timeout: 600_000,
}, async (t: TestContext) => {
  const c = await uid1000App('services:\n  api:\n    sync: [".:/app"]\n');
  const { s, dev } = c;
  const startedAt = Date.now();
  const up = await startUp(['-n', s.namespace], { env: c.env, cwd: c.folder });
  t.diagnostic(`up ready in ${Date.now() - startedAt} ms (a new claim of local-path)`);
  await waitFor('first sync settled', () => /first sync settled in/.test(up.output()), 60_000);
  assert.deepEqual(notices(up), [], 'no notice: the claim is writable');
  const claim = await s.core.readNamespacedPersistentVolumeClaim({ name: 'api-devtool', namespace: s.namespace });
  assert.equal(claim.spec?.storageClassName, 'local-path');
  const pv = await s.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  t.diagnostic(`volume ${pv.metadata?.name}: node affinity ${JSON.stringify(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms)}`);
  assert.ok(pv.spec?.nodeAffinity?.required, 'the volume is bound to its node');

  await editsSyncBothWays(c, 'one');
  assert.equal(dev(['exec', '--', 'sh', '-c', `echo kept > ${KEPT}`]).code, 0);
  await restartDevPod(c);
  const kept = dev(['exec', '--', 'sh', '-c', `cat ${KEPT} /app/from-container-one.txt /app/later-one.txt`]);
  assert.equal(kept.code, 0, kept.stderr);
  assert.equal(kept.stdout, 'kept\none\none\n');
  await editsSyncBothWays(c, 'two');
  await up.stop();
});

test('storage that ignores fsGroup (root-owned folders): up works with the files in an emptyDir and says so in one line', { timeout: 600_000 }, async (t) => {
  const c = await uid1000App('services:\n  api:\n    sync: [".:/app"]\n    persistentVolume: {storageClass: standard}\n');
  const { s, apps, dev } = c;
  const storageClass = await s.kc.makeApiClient(k8s.StorageV1Api).readStorageClass({ name: 'standard' });
  assert.equal(storageClass.provisioner, 'kubernetes.io/host-path', 'the local cluster keeps the host-path class');
  const startedAt = Date.now();
  const up = await startUp(['-n', s.namespace], { env: c.env, cwd: c.folder });
  t.diagnostic(`up ready in ${Date.now() - startedAt} ms (a new claim of standard, found unwritable, then an emptyDir)`);
  await waitFor('first sync settled', () => /first sync settled in/.test(up.output()), 60_000);
  const said = notices(up);
  assert.equal(said.length, 1, up.output());
  assert.match(said[0]!, NOTICE);
  await editsSyncBothWays(c, 'one');

  const mirror = await apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace });
  const data = mirror.spec?.template.spec?.volumes?.find((v) => v.name === 'devtool-data');
  assert.ok(data?.emptyDir && !data.persistentVolumeClaim, `the data volume: ${JSON.stringify(data)}`);
  const claim = await s.core.readNamespacedPersistentVolumeClaim({ name: 'api-devtool', namespace: s.namespace });
  assert.ok(claim.metadata?.annotations?.['devtool.dev/claim-unwritable'], 'recorded on the claim');

  // What the line says is given up: a new dev pod starts with an empty volume (the sync brings the folder again).
  assert.equal(dev(['exec', '--', 'sh', '-c', `echo kept > ${KEPT}`]).code, 0);
  const pod = await restartDevPod(c);
  assert.notEqual(dev(['exec', '--', 'cat', KEPT]).code, 0, 'not kept across the restart');
  await waitFor('the synced files back', () => dev(['exec', '--', 'cat', '/app/from-container-one.txt']).stdout === 'one\n', 60_000);
  await up.stop();

  // The next up says it again at once, and leaves the running dev pod alone.
  const againAt = Date.now();
  const again = await startUp(['-n', s.namespace], { env: c.env, cwd: c.folder });
  t.diagnostic(`the next up ready in ${Date.now() - againAt} ms (the dev pod kept)`);
  assert.equal(notices(again).length, 1, again.output());
  assert.equal(dev(['exec', '--', 'sh', '-c', 'echo $HOSTNAME']).stdout.trim(), pod, 'not rolled');
  await editsSyncBothWays(c, 'two');
  await again.stop();

  const down = dev(['down', '--volumes'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  await assert.rejects(s.core.readNamespacedPersistentVolumeClaim({ name: 'api-devtool', namespace: s.namespace }));
});
