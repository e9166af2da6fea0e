/**
 * Dev containers in locked-down namespaces and with non-root images (docs/dev-containers.md,
 * "Pod Security and non-root images"): `up` where Pod Security `restricted` or `baseline` is
 * enforced, with an image whose user (uid 1000) has no home and with a random uid in group 0 as
 * OpenShift assigns, each on the cluster's default storage; and a dev section the policy refuses,
 * which fails in one line before anything changes. Storage that ignores fsGroup:
 * dev-storage.e2e.test.ts.
 */
import type * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { crane } from '../../cluster/test-cluster.ts';
import { lines } from './cli.ts';
import { REGISTRY } from './cluster.ts';
import { compliant, lockedDownApp, sleeper, tearDownLockedDown, uid1000Image, type LockedDownApp } from './locked-down.ts';
import { runInPty } from './pty.ts';
import { startUp } from './up-session.ts';
import { waitFor } from './wait.ts';

const RANDOM_UID = 1000770000;
const FORWARD = 29000 + Math.floor(Math.random() * 1000);

after(tearDownLockedDown);

/**
 * node:20 made for OpenShift's random uids: /etc/passwd writable by group 0 (`chmod g=u`), so that
 * the entrypoint can give the uid a name. The file is a minimal one (root and node), mode 0664.
 */
function openshiftReadyImage(): string {
  const ref = `${REGISTRY}/node-openshift:20`;
  try {
    crane(['digest', '--insecure', ref]);
    return ref;
  } catch {
    // not pushed yet: build it
  }
  const work = mkdtempSync(join(tmpdir(), 'devtool-image-'));
  mkdirSync(join(work, 'etc'));
  writeFileSync(join(work, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\nnode:x:1000:1000::/home/node:/bin/bash\n');
  chmodSync(join(work, 'etc/passwd'), 0o664);
  const layer = join(work, 'layer.tar');
  const tar = spawnSync('tar', ['-C', work, '--owner=0', '--group=0', '-cf', layer, 'etc'], { encoding: 'utf8' });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  crane(['append', '--insecure', '-b', `${REGISTRY}/node:20`, '-f', layer, '-t', ref]);
  return ref;
}

/** The manifest of the non-root cases: the default persistent volume on the cluster's default storage. */
const NON_ROOT_MANIFEST = 'services:\n  api:\n    sync: [".:/app"]\n';

/** A namespace enforcing Pod Security `level`, with `api` deployed from `pod` and a project folder syncing to /app. */
const setUp = (level: 'restricted' | 'baseline', pod: k8s.V1PodSpec, manifest = NON_ROOT_MANIFEST) => lockedDownApp(`dev-psa-${level}`, level, pod, manifest);

/** One GET through a forward, bounded; '' while nothing answers. */
async function httpGet(port: number): Promise<string> {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) })).text();
  } catch {
    return '';
  }
}

/**
 * `up`, then: files both ways owned by `uid`, exec as `uid`, a writable home, a shell in a
 * terminal, and (`forward`: the manifest forwards it to 8080) a server of the dev container
 * answering here; `down` restores the original.
 */
async function developAs(t: TestContext, c: LockedDownApp, uid: number, opts: { forward?: number; readOnlyRoot?: boolean; name?: string } = {}): Promise<void> {
  const { forward, readOnlyRoot, name } = opts;
  const { s, apps, folder, env, dev } = c;
  const before_ = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  const up = await startUp(['-n', s.namespace], { env, cwd: folder });
  await waitFor('first sync settled', () => /first sync settled in/.test(up.output()), 60_000);

  const id = dev(['exec', '--', 'sh', '-c', 'id -u; id -g; stat -c %u /app/from-laptop.txt; cat /app/from-laptop.txt']);
  assert.equal(id.code, 0, id.stderr);
  const [user, , owner, text] = id.stdout.trim().split('\n');
  assert.equal(user, String(uid), 'exec runs as the image user');
  assert.equal(owner, String(uid), 'a synced file belongs to that user');
  assert.equal(text, 'laptop');

  // A name, where the image lets the agent add the uid to /etc/passwd (OpenShift's convention);
  // else none, and nothing else fails for it.
  const whoami = dev(['exec', '--', 'sh', '-c', 'whoami 2>/dev/null || echo "(no name)"']);
  assert.equal(whoami.stdout.trim(), name ?? '(no name)', whoami.stderr);
  // A home it can write, though its user has no /etc/passwd entry (the runtime says HOME=/).
  const home = dev(['exec', '--', 'sh', '-c', 'cd && touch .probe && pwd']);
  assert.equal(home.code, 0, home.stderr);
  assert.equal(home.stdout.trim(), '/var/devtool/home');
  // And a temporary folder, also when the root file system is read-only (TMPDIR then on the volume).
  const tmp = dev(['exec', '--', 'sh', '-c', 'f=$(mktemp) && echo x > "$f" && echo "$f"']);
  assert.equal(tmp.code, 0, tmp.stderr);
  t.diagnostic(`uid ${uid}: mktemp made ${tmp.stdout.trim()}`);
  if (readOnlyRoot) assert.match(tmp.stdout.trim(), /^\/var\/devtool\/tmp\//);

  // Container -> laptop, and an edit here that arrives there owned by the user.
  assert.equal(dev(['exec', '--', 'sh', '-c', 'echo container > /app/from-container.txt']).code, 0);
  await waitFor(
    'from-container.txt here',
    () => existsSync(join(folder, 'from-container.txt')) && readFileSync(join(folder, 'from-container.txt'), 'utf8') === 'container\n',
  );
  writeFileSync(join(folder, 'later.txt'), 'later\n');
  await waitFor('later.txt there', () => dev(['exec', '--', 'sh', '-c', 'stat -c %u /app/later.txt']).stdout.trim() === String(uid));
  assert.ok(statSync(join(folder, 'from-container.txt')).isFile());
  if (forward) {
    const serve = `require('http').createServer((q,r)=>r.end('uid '+process.getuid())).listen(8080)`;
    assert.equal(dev(['exec', '--', 'sh', '-c', `nohup node -e "${serve}" >/dev/null 2>&1 &`]).code, 0);
    await waitFor('the forward answering', async () => (await httpGet(forward)) === `uid ${uid}`);
  }
  await up.stop();

  // In a terminal, up opens the user's shell in the dev container.
  const pty = runInPty(['up', '-n', s.namespace], { cwd: folder, env });
  await pty.waitFor(/dev container api-devtool is ready/, 240_000);
  await pty.waitFor(/[#$] $/m, 60_000);
  pty.type('echo "shell uid $(id -u) in $(pwd) home $HOME"\r');
  await pty.waitFor(`shell uid ${uid} in /app home /var/devtool/home`, 30_000);
  if (name) assert.doesNotMatch(pty.output(), /I have no name!/, 'the prompt has the name');
  pty.type('exit\r');
  assert.equal(await pty.exit(60_000), 0, pty.output());

  const down = dev(['down'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  const restored = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  assert.deepEqual(restored.spec, before_.spec);
}

test('restricted: an image running as uid 1000 with no home gets sync, exec and a shell', { timeout: 600_000 }, async (t) => {
  const c = await setUp('restricted', {
    // Seccomp on the container only: the agent's installer (an init container) must set its own.
    securityContext: { runAsNonRoot: true },
    containers: [sleeper(uid1000Image(), { ...compliant, seccompProfile: { type: 'RuntimeDefault' }, readOnlyRootFilesystem: true })],
  });
  await developAs(t, c, 1000, { readOnlyRoot: true });
});

test('baseline: a random uid in group 0 (as OpenShift assigns) gets sync, exec, a shell and a name', { timeout: 600_000 }, async (t) => {
  const c = await setUp(
    'baseline',
    {
      securityContext: { runAsUser: RANDOM_UID, runAsGroup: 0 },
      containers: [sleeper(openshiftReadyImage(), compliant)],
    },
    `${NON_ROOT_MANIFEST}    forward: ["${FORWARD}:8080"]\n`,
  );
  await developAs(t, c, RANDOM_UID, { forward: FORWARD, name: 'devtool' });
});

test('restricted: a dev section asking for root fails in one line before anything changes', { timeout: 300_000 }, async (t) => {
  const { s, apps, dev } = await setUp(
    'restricted',
    {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [sleeper(`${REGISTRY}/debian:bookworm`, compliant)],
    },
    'services:\n  api:\n    sync: [".:/app"]\n    securityContext:\n      runAsUser: 0\n      capabilities:\n        add: [NET_ADMIN]\n',
  );
  const before_ = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  const r = dev(['up'], 120_000);
  assert.equal(r.code, 1, r.stderr);
  const [line, ...more] = lines(r.stderr).filter((l) => l.startsWith('Error:'));
  assert.equal(more.length, 0);
  t.diagnostic(line!);
  assert.match(line!, new RegExp(`^Error: dev container api cannot run in namespace ${s.namespace}: its Pod Security policy "restricted"`));
  assert.match(line!, /runAsUser=0/);
  assert.match(line!, /NET_ADMIN/);
  assert.match(line!, /change services\.api\.securityContext in the manifest/);
  assert.match(line!, /nothing was changed$/);

  const after_ = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  assert.deepEqual(after_.spec, before_.spec);
  assert.deepEqual(after_.metadata?.annotations, before_.metadata?.annotations);
  await assert.rejects(apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace }));
  await assert.rejects(s.core.readNamespacedSecret({ name: 'api-devtool', namespace: s.namespace }));
  await assert.rejects(s.core.readNamespacedPersistentVolumeClaim({ name: 'api-devtool', namespace: s.namespace }));
});
