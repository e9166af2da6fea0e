/**
 * `up` survives the three faults of a working day, on the local cluster: the dev pod killed, the
 * port-forward dropped (its TCP connections to the API server destroyed by the kernel, `ss -K`),
 * and the API server restarted. One `up` session lives through all three; after each, a change
 * made locally during the fault reaches the container, a change made in the container comes back,
 * a forwarded port answers again, and nothing was lost on either side. Then the remedy of the
 * States table for sync that stopped working: `up --reset`, which must lose nothing either.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { restartCluster, stopComponent } from '../../cluster/test-cluster.ts';
import { runDevtool, spawnDevtool } from './cli.ts';
import { startUp, tearDownDev, type UpSession } from './up-session.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, runningPod, type ClusterSandbox } from './cluster.ts';

/** Forwarded to the agent's SSH server in the dev container: something that always answers there. */
const FORWARD_PORT = 18222;

let s: ClusterSandbox;
let folder: string;
let env: NodeJS.ProcessEnv;
let up: UpSession;

before(async () => {
  s = await clusterSandbox('dev-faults');
  await createSleepingDeployment(s, 'api');
  folder = join(s.root, 'project');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'devtool.yml'), `services:\n  api:\n    sync: [".:/app"]\n    forward: ["${FORWARD_PORT}:2222"]\n`);
  writeFileSync(join(folder, 'before.txt'), 'written before up\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  up = await startUp(['-n', s.namespace], { env, cwd: folder });
});

after(() => tearDownDev(s, env, [folder]));

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (up.proc.exitCode !== null) throw new Error(`${what}: up exited (${up.proc.exitCode}):\n${up.output()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s; up said:\n${up.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const inContainer = (script: string) => runDevtool(['exec', '-n', s.namespace, '--', 'sh', '-c', script], { env, cwd: folder, timeoutMs: 60_000 });
const readLocal = (name: string) => (existsSync(join(folder, name)) ? readFileSync(join(folder, name), 'utf8') : undefined);

/** The first bytes the forwarded port answers with (the SSH banner), or '' when it does not answer. */
function forwardAnswer(): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(FORWARD_PORT, '127.0.0.1');
    const timer = setTimeout(() => {
      sock.destroy();
      resolve('');
    }, 5000);
    sock.once('data', (d) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(d.toString());
    });
    sock.once('error', () => {
      clearTimeout(timer);
      resolve('');
    });
    sock.once('close', () => {
      clearTimeout(timer);
      resolve('');
    });
  });
}

/** After a fault: what was written locally during it arrives, a container write comes back, the forward answers. */
async function checkRecovered(fault: string, writtenDuring: string): Promise<void> {
  await waitFor(
    `${fault}: the local change made during the fault in the container`,
    () => inContainer(`cat /app/${writtenDuring} 2>/dev/null`).stdout === `${fault}\n`,
    180_000,
  );
  const remoteName = `${writtenDuring}.from-container`;
  assert.equal(inContainer(`echo '${fault} in the container' > /app/${remoteName}`).code, 0);
  await waitFor(`${fault}: the container's change locally`, () => readLocal(remoteName) === `${fault} in the container\n`, 60_000);
  await waitFor(`${fault}: the forwarded port answers`, async () => (await forwardAnswer()).startsWith('SSH-2.0-'), 60_000);
  // Nothing earlier was lost on either side.
  assert.equal(readLocal('before.txt'), 'written before up\n');
  assert.equal(inContainer('cat /app/before.txt').stdout, 'written before up\n');
  assert.equal(up.proc.exitCode, null, 'up is still running');
}

test('the dev pod is killed: up reconnects to the new pod, sync and forwards resume', { timeout: 420_000 }, async () => {
  const core = s.core;
  const old = await runningPod(core, s.namespace, 'devtool.dev/dev-pod=api');
  const reconnects = up.output().split('reconnected to the dev container').length;
  await core.deleteNamespacedPod({ name: old, namespace: s.namespace, gracePeriodSeconds: 0 });
  writeFileSync(join(folder, 'during-pod-kill.txt'), 'pod kill\n');
  await waitFor('a new dev pod', async () => (await runningPod(core, s.namespace, 'devtool.dev/dev-pod=api').catch(() => old)) !== old, 180_000);
  await checkRecovered('pod kill', 'during-pod-kill.txt');
  assert.ok(up.output().split('reconnected to the dev container').length > reconnects, `up said it reconnected:\n${up.output()}`);
});

test('the local Syncthing dies: up restarts it with its folders two-way again, nothing lost', { timeout: 300_000 }, async () => {
  const pids = () =>
    spawnSync('pgrep', ['-f', `syncthing serve --home=${env.DEVTOOL_HOME}/dev/`], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n')
      .filter(Boolean);
  const [old] = pids();
  assert.ok(old, 'the local Syncthing of this up runs');
  process.kill(Number(old), 'SIGKILL');
  writeFileSync(join(folder, 'during-local-crash.txt'), 'local sync service crash\n');
  await waitFor('a new local Syncthing', () => pids().some((p) => p !== old), 60_000);
  // Restarted from its contract its folders were paused and send-only: a container change would
  // never come back (checkRecovered's second step) had up not set them up again.
  await checkRecovered('local sync service crash', 'during-local-crash.txt');
  assert.match(readFileSync(join(env.DEVTOOL_HOME!, 'devtool.log'), 'utf8'), /the local sync service restarted: its folders are set up again/);
});

test('the port-forward is dropped: up dials again and nothing is lost', { timeout: 300_000 }, async () => {
  // Every TCP connection of the up process to the API server, port-forward streams included.
  const ports = spawnSync('ss', ['-tnpH', 'state', 'established', '( dport = :6443 )'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.includes(`pid=${up.proc.pid},`))
    .map((l) => l.trim().split(/\s+/)[2]!.split(':').pop()!);
  assert.ok(ports.length > 0, 'up has connections to the API server');
  for (const port of ports) {
    const r = spawnSync('ss', ['-K', 'dst', '127.0.0.1', 'dport', '=', ':6443', 'sport', '=', `:${port}`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
  writeFileSync(join(folder, 'during-drop.txt'), 'port-forward drop\n');
  await checkRecovered('port-forward drop', 'during-drop.txt');
});

test('the API server restarts: up rides it out, sync resumes', { timeout: 420_000 }, async () => {
  stopComponent('kube-apiserver');
  try {
    writeFileSync(join(folder, 'during-restart.txt'), 'API server restart\n');
    // Long enough for the SSH keepalive (3 x 5 s) to notice the dead connection.
    await new Promise((r) => setTimeout(r, 20_000));
    assert.equal(up.proc.exitCode, null, `up is still running while the API server is away:\n${up.output()}`);
  } finally {
    restartCluster();
  }
  await checkRecovered('API server restart', 'during-restart.txt');
  await waitFor(
    'status 100.00%',
    () => runDevtool(['status', '-n', s.namespace], { env, cwd: folder, timeoutMs: 30_000 }).stdout.trim() === 'Synchronization status: 100.00%',
    60_000,
  );
});

test('status --watch follows up until it ends; up --reset starts both ends afresh and loses nothing', { timeout: 420_000 }, async () => {
  const watch = spawnDevtool(['status', '-n', s.namespace, '--watch'], { env, cwd: folder });
  let watched = '';
  let watchErr = '';
  watch.stdout.on('data', (c: Buffer) => (watched += c.toString()));
  watch.stderr.on('data', (c: Buffer) => (watchErr += c.toString()));
  const watchExit = new Promise<number | null>((r) => watch.once('exit', r));
  await waitFor('status --watch prints the figure', () => /^Synchronization status: \d+\.\d\d%$/m.test(watched), 30_000);

  // The end of up ends the watch, with one line saying why.
  await up.stop();
  const code = await Promise.race([watchExit, new Promise((r) => setTimeout(() => r('still running'), 15_000))]);
  assert.equal(code, 1, `status --watch ends with up (stdout: ${watched}, stderr: ${watchErr})`);
  assert.equal(watchErr.trim().split('\n').length, 1, watchErr);

  // A change on each side while no session runs, then --reset: both Syncthings drop their index.
  writeFileSync(join(folder, 'while-stopped.txt'), 'local, while stopped\n');
  assert.equal(inContainer('echo remote, while stopped > /app/while-stopped-remote.txt').code, 0);
  up = await startUp(['-n', s.namespace, '--reset'], { env, cwd: folder });
  await waitFor('the local change in the container', () => inContainer('cat /app/while-stopped.txt 2>/dev/null').stdout === 'local, while stopped\n', 60_000);
  await waitFor("the container's change locally", () => readLocal('while-stopped-remote.txt') === 'remote, while stopped\n', 60_000);
  for (const name of ['before.txt', 'during-pod-kill.txt', 'during-drop.txt', 'during-restart.txt']) {
    assert.ok(readLocal(name), `${name} is still here`);
    assert.equal(inContainer(`cat /app/${name}`).stdout, readLocal(name), `${name} is the same in the container`);
  }
  writeFileSync(join(folder, 'after-reset.txt'), 'reset\n');
  await checkRecovered('reset', 'after-reset.txt');
});
