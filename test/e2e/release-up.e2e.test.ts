/**
 * A new user's first `up` from a release (docs/releasing.md, "What the new-user test verifies"):
 * `npm run release -- --npm-only` for a registry that does not exist, the tarballs installed with
 * `npm install -g --offline` into an empty prefix inside a chroot of a Debian root file system
 * that has Node.js and npm but no Go, no npm cache and no checkout (the local cluster's `node:20`
 * image, cluster/images/node, exported from its registry), then `devtool up` run there against the
 * local cluster in a fresh namespace whose context names no registry. The CLI runs the agent image
 * its package names, which no node can pull, so the agent is copied in: ready, an edit syncs,
 * `down` restores.
 *
 * The chroot runs in a mount namespace of its own (unshare), where /proc and /dev are mounted:
 * those mounts end with its last process, so nothing is left mounted on this machine.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot } from './cli.ts';
import { clusterSandbox, createSleepingDeployment, deleteNamespace, type ClusterSandbox } from './cluster.ts';
import { waitFor } from './wait.ts';

const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
/** A registry no node can reach (.invalid never resolves): the release's images are not pullable. */
const RELEASE_REGISTRY = 'unreachable.invalid/devtool';
const PLATFORM_PACKAGE = `devtool-${process.platform}-${process.arch}`;
/** In the chroot: the new user's home, the empty npm prefix, the project. */
const HOME = '/home/dev';
const PREFIX = '/opt/devtool';
const PROJECT = `${HOME}/api`;
const READY = 'Forwarding until interrupted';

const work = mkdtempSync(join(tmpdir(), 'devtool-release-up-'));
const root = join(work, 'root');
const release = join(work, 'release');
let s: ClusterSandbox | undefined;
let apps: k8s.AppsV1Api;
let up: ChildProcessWithoutNullStreams | undefined;

/** The new user's environment: nothing of this machine's but what a shell on a fresh Debian has. */
const USER_ENV = {
  PATH: `${PREFIX}/bin:/usr/local/bin:/usr/bin:/bin`,
  HOME,
  LANG: 'C.UTF-8',
  // Nothing listens there: an npm request would fail.
  npm_config_registry: 'http://127.0.0.1:9/',
};

/** Runs `command` in the chroot, in the folder `cwd` there, in a mount namespace of its own with /proc and /dev. */
function chrootArgs(cwd: string, command: readonly string[]): string[] {
  const script = 'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec /usr/sbin/chroot "$0" /bin/sh -c \'cd "$0" && exec "$@"\' "$@"';
  return ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', script, root, cwd, ...command];
}

function inChroot(cwd: string, command: readonly string[], timeout = 120_000) {
  const r = spawnSync('/usr/bin/unshare', chrootArgs(cwd, command), { env: USER_ENV, encoding: 'utf8', timeout, killSignal: 'SIGKILL' });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function ok<T extends { code: number | null; stdout: string; stderr: string }>(r: T, what: string): T {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** Runs a program of this machine; throws with its output if it fails. */
function host(program: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env, timeout = 300_000): string {
  const r = spawnSync(program, args, { env, cwd: repoRoot, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  return ok({ code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? String(r.error ?? '') }, `${program} ${args.join(' ')}`).stdout;
}

async function readyReplicas(name: string): Promise<number> {
  return (await apps.readNamespacedDeployment({ name, namespace: s!.namespace })).status?.readyReplicas ?? 0;
}

before(
  async () => {
    // The release, as its maintainer builds it, for a registry no cluster reaches.
    host(
      process.execPath,
      ['--import', 'tsx', 'scripts/release/main.ts', '--npm-only', '--out', release],
      { ...process.env, DEVTOOL_RELEASE_REGISTRY: RELEASE_REGISTRY },
      1_200_000,
    );

    // The new user's machine: the local cluster's Debian 13 image with Node.js 20 and npm.
    s = await clusterSandbox('relw-up');
    apps = s.kc.makeApiClient(k8s.AppsV1Api);
    const image = host('bash', ['cluster/cluster.sh', 'image', 'node']).trim().split('\n').at(-1)!;
    mkdirSync(root);
    host('/bin/sh', ['-c', 'bash cluster/cluster.sh crane --insecure export "$0" - | tar -x --numeric-owner -C "$1"', image, root]);
    if (!existsSync(join(root, 'etc/hosts'))) writeFileSync(join(root, 'etc/hosts'), '127.0.0.1 localhost\n::1 localhost\n');
    for (const dir of [HOME, `${HOME}/.kube`, PREFIX, '/tmp']) mkdirSync(join(root, dir), { recursive: true });
    chmodSync(join(root, 'tmp'), 0o1777);
    for (const tarball of [`devtool-${version}.tgz`, `${PLATFORM_PACKAGE}-${version}.tgz`])
      copyFileSync(join(release, 'npm', tarball), join(root, HOME, tarball));
    copyFileSync(s.cluster.kubeconfigPath, join(root, HOME, '.kube/config'));

    // The workload the dev container replaces.
    await createSleepingDeployment(s, 'api');
  },
  { timeout: 1_500_000 },
);

after(async () => {
  if (up && up.exitCode === null) {
    up.kill('SIGKILL');
    await new Promise((r) => up!.once('exit', r));
  }
  if (s) {
    inChroot(PROJECT, ['devtool', 'down', '-n', s.namespace, '--volumes']);
    await deleteNamespace(s);
  }
  // Every chroot process has ended, and with it its mounts; never delete through one that is left.
  const mounted = readFileSync('/proc/mounts', 'utf8').includes(` ${root}/`);
  if (mounted) console.error(`left ${work} in place: something is still mounted under ${root}`);
  else rmSync(work, { recursive: true, force: true });
});

test('the chroot is a new user’s machine: Node.js and npm, no Go, no devtool, no npm cache', () => {
  // Before npm runs (it makes ~/.npm for its logs): no cache, nothing installed, no checkout, no Go or build cache.
  for (const path of [`${HOME}/.npm`, `${PREFIX}/lib`, repoRoot, '/usr/local/go', '/root/go', '/var/cache/devtool-build']) {
    assert.equal(existsSync(join(root, path)), false, path);
  }
  assert.match(ok(inChroot(HOME, ['node', '--version']), 'node --version').stdout, /^v20\./);
  ok(inChroot(HOME, ['npm', '--version']), 'npm --version');
  for (const absent of ['go', 'devtool']) assert.notEqual(inChroot(HOME, ['sh', '-c', `command -v ${absent}`]).code, 0, `${absent} is on the PATH`);
});

test('installed into an empty prefix: up names its release’s agent image, copies the agent in when it cannot pull it, syncs, down restores', {
  timeout: 600_000,
}, async (t) => {
  const ns = s!.namespace;
  const install = ['npm', 'install', '-g', '--offline', '--no-update-notifier', '--no-audit', '--no-fund', '--prefix', PREFIX];
  const installStart = Date.now();
  ok(inChroot(HOME, [...install, `./devtool-${version}.tgz`, `./${PLATFORM_PACKAGE}-${version}.tgz`], 300_000), 'npm install -g');
  t.diagnostic(`npm install -g in ${((Date.now() - installStart) / 1000).toFixed(1)} s`);
  const installed = JSON.parse(readFileSync(join(root, PREFIX, 'lib/node_modules/devtool/package.json'), 'utf8'));
  const agentImage: string = installed.devtool.agentImage;
  assert.match(agentImage, new RegExp(`^${RELEASE_REGISTRY.replaceAll('.', '\\.')}/devtool-bin:${version.replaceAll('.', '\\.')}@sha256:[0-9a-f]{64}$`));
  assert.equal(ok(inChroot(HOME, ['devtool', 'version']), 'devtool version').stdout, `devtool version ${version}\n`);

  await waitFor('the original running', async () => (await readyReplicas('api')) === 1, 120_000);
  const original = await apps.readNamespacedDeployment({ name: 'api', namespace: ns });
  mkdirSync(join(root, PROJECT));
  writeFileSync(join(root, PROJECT, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n    persistentVolume: {enabled: false}\n');
  writeFileSync(join(root, PROJECT, 'from-laptop.txt'), 'laptop\n');
  // The context is the kubeconfig's: it names no registry, and nothing sets DEVTOOL_BIN_IMAGE.
  assert.equal(JSON.parse(ok(inChroot(PROJECT, ['devtool', 'context', 'show']), 'context show').stdout).registry, '-');

  const upStart = Date.now();
  up = spawn('/usr/bin/unshare', chrootArgs(PROJECT, ['devtool', 'up', '-n', ns]), { env: USER_ENV, stdio: 'pipe' });
  let stdout = '';
  let output = '';
  up.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
    output += c.toString();
  });
  up.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((r) => up!.once('exit', r));
  await Promise.race([waitFor('up ready', () => stdout.includes(READY), 300_000), exited.then((code) => assert.fail(`up exited ${code}:\n${output}`))]).catch(
    (err: Error) => assert.fail(`${err.message}\n${output}`),
  );
  t.diagnostic(`up ready in ${((Date.now() - upStart) / 1000).toFixed(1)} s`);
  for (const line of output.split('\n').filter((l) => l.includes('agent'))) t.diagnostic(line);

  assert.ok(output.includes(`the agent image ${agentImage} cannot be pulled (`), output);
  assert.ok(output.includes('agent copied into the dev container through the Kubernetes API (no registry)'), output);
  assert.match(stdout, /dev container api-devtool is ready/);
  const mirror = await apps.readNamespacedDeployment({ name: 'api-devtool', namespace: ns });
  assert.equal(mirror.metadata?.annotations?.['devtool.dev/agent-image-unpulled'], agentImage);

  const exec = (...command: string[]) => inChroot(PROJECT, ['devtool', 'exec', '-n', ns, '--', ...command]);
  assert.equal(ok(exec('cat', '/app/from-laptop.txt'), 'exec cat').stdout, 'laptop\n');
  writeFileSync(join(root, PROJECT, 'edited.txt'), 'an edit\n');
  await waitFor('the edit in the dev container', () => exec('cat', '/app/edited.txt').stdout === 'an edit\n', 60_000);

  up.kill('SIGTERM');
  await exited;
  ok(inChroot(PROJECT, ['devtool', 'down', '-n', ns]), 'down');
  assert.deepEqual((await apps.readNamespacedDeployment({ name: 'api', namespace: ns })).spec, original.spec);
  await waitFor('the original running again', async () => (await readyReplicas('api')) === 1, 120_000);
  const mirrors = async () => (await apps.listNamespacedDeployment({ namespace: ns })).items.filter((d) => d.metadata?.name === 'api-devtool');
  await waitFor('the dev Deployment deleted', async () => (await mirrors()).length === 0, 60_000);
});
