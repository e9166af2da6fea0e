/**
 * Dev containers in locked-down namespaces and with non-root images (docs/dev-containers.md,
 * "Pod Security and non-root images"): `up` where Pod Security `restricted` or `baseline` is
 * enforced, with an image whose user (uid 1000) has no home and with a random uid in group 0 as
 * OpenShift assigns; a dev section the policy refuses, which fails in one line before anything
 * changes; and a non-root image on storage that ignores fsGroup, which fails saying what to change.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { crane } from '../../cluster/test-cluster.ts';
import { lines, runDevtool } from './cli.ts';
import { runInPty } from './pty.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';
import { clusterSandbox, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';

const RANDOM_UID = 1000770000;
const FORWARD = 29000 + Math.floor(Math.random() * 1000);

const sandboxes: { s: ClusterSandbox; env: NodeJS.ProcessEnv; folder: string }[] = [];

after(async () => {
  for (const { s, env, folder } of sandboxes) await tearDownDev(s, env, [folder]);
});

/**
 * debian:bookworm with `USER 1000:1000`: a numeric user the image's /etc/passwd does not know
 * (no name, no home), as many application images ship.
 */
function uid1000Image(): string {
  const ref = `${REGISTRY}/debian-uid1000:bookworm`;
  try {
    crane(['digest', '--insecure', ref]);
  } catch {
    crane(['mutate', '--insecure', '--user', '1000:1000', `${REGISTRY}/debian:bookworm`, '-t', ref]);
  }
  return ref;
}

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

/**
 * The manifest of the non-root cases. No persistent volume: the local cluster's storage (the
 * in-tree host-path provisioner) ignores fsGroup, as all hostPath storage does, so its folders are
 * root's 0750 and no non-root uid could write there (the agent says so; see
 * docs/dev-containers.md). The dev pod's emptyDir is writable by any uid.
 */
const NON_ROOT_MANIFEST = 'services:\n  api:\n    sync: [".:/app"]\n    persistentVolume: {enabled: false}\n';

/** A namespace enforcing Pod Security `level`, with `api` deployed from `pod` and a project folder syncing to /app. */
async function setUp(level: 'restricted' | 'baseline', pod: k8s.V1PodSpec, manifest = NON_ROOT_MANIFEST) {
  const s = await clusterSandbox(`dev-psa-${level}`);
  const ns = await s.core.readNamespace({ name: s.namespace });
  ns.metadata!.labels = { ...ns.metadata!.labels, 'pod-security.kubernetes.io/enforce': level, 'pod-security.kubernetes.io/enforce-version': 'latest' };
  await s.core.replaceNamespace({ name: s.namespace, body: ns });
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name: 'api', labels: { app: 'api' } },
      spec: { replicas: 1, selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: pod } },
    },
  });
  // The original's pods are admitted: the premise of every case here.
  await waitFor(
    'the original pod running',
    async () => (await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).status?.readyReplicas === 1,
    120_000,
  );
  const folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), manifest);
  writeFileSync(join(folder, 'from-laptop.txt'), 'laptop\n');
  const env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  sandboxes.push({ s, env, folder });
  const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
  return { s, apps, folder, env, dev };
}

/** One GET through a forward, bounded; '' while nothing answers. */
async function httpGet(port: number): Promise<string> {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) })).text();
  } catch {
    return '';
  }
}

const sleeper = (image: string, securityContext: k8s.V1SecurityContext): k8s.V1Container => ({
  name: 'api',
  image,
  command: ['sleep', 'infinity'],
  securityContext,
});

const compliant: k8s.V1SecurityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

/**
 * `up`, then: files both ways owned by `uid`, exec as `uid`, a writable home, a shell in a
 * terminal, and (`forward`: the manifest forwards it to 8080) a server of the dev container
 * answering here; `down` restores the original.
 */
async function developAs(
  t: TestContext,
  c: Awaited<ReturnType<typeof setUp>>,
  uid: number,
  opts: { forward?: number; readOnlyRoot?: boolean; name?: string } = {},
): Promise<void> {
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

test('a non-root image on storage that ignores fsGroup fails in one line saying what to change', { timeout: 300_000 }, async (t) => {
  // The local cluster's default storage is the in-tree host-path provisioner (folders root 0750,
  // fsGroup not applied); on storage that applies fsGroup this case simply works.
  const { s, apps, dev } = await setUp(
    'restricted',
    {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [sleeper(uid1000Image(), compliant)],
    },
    'services:\n  api:\n    sync: [".:/app"]\n',
  );
  const classes = await s.kc.makeApiClient(k8s.StorageV1Api).listStorageClass();
  const standard = classes.items.find((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
  if (standard?.provisioner !== 'kubernetes.io/host-path') return t.skip(`the default storage class is ${standard?.provisioner}`);
  const before_ = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  const r = dev(['up'], 240_000);
  assert.equal(r.code, 1, r.stderr);
  const errors = lines(r.stderr).filter((l) => l.startsWith('Error:'));
  assert.equal(errors.length, 1, r.stderr);
  assert.match(errors[0]!, /state directory \/var\/devtool \(owner 0:0, mode 0750\) is not writable by uid 1000 /);
  assert.match(errors[0]!, /its volume ignores the pod's securityContext\.fsGroup .*persistentVolume\.enabled: false in the manifest/);
  const down = dev(['down', '--volumes'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  assert.deepEqual((await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).spec, before_.spec);
});
