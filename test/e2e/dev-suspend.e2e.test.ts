/**
 * `up` survives the laptop sleeping, on the local cluster. A suspend freezes every process at once;
 * here `up` runs in a process group of its own (the CLI, the local Syncthing under it) and the whole
 * group is stopped with SIGSTOP for a minute, then continued with SIGCONT. Meanwhile files change
 * on both sides: on this machine's disk (the processes are frozen, the files are not) and in the
 * dev container (through the API server's exec, which needs nothing of `up`). After SIGCONT every
 * edit must arrive on the other side with its content, no `.sync-conflict-` copy may appear (each
 * file changed on one side only), the forwarded port must answer and `status` say 100.00%. The
 * time from SIGCONT to all of that is printed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { startUp, tearDownDev, type UpSession } from './up-session.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, execInPod, runningPod, type ClusterSandbox } from './cluster.ts';

/** How long the "laptop" sleeps (DEVTOOL_E2E_SUSPEND_MS overrides it to try other lengths by hand). */
const SUSPEND_MS = Number(process.env.DEVTOOL_E2E_SUSPEND_MS ?? 60_000);
/** Forwarded to the agent's SSH server in the dev container: something that always answers there. */
const FORWARD_PORT = 18_000 + Math.floor(Math.random() * 1000);

let s: ClusterSandbox;
let folder: string;
let env: NodeJS.ProcessEnv;
let up: UpSession;
const ROUNDS = ['plain', 'dead-path'];
/** iptables rules to delete after the test (the dead-path round). */
const rules: string[][] = [];

before(async () => {
  s = await clusterSandbox('dev-suspend');
  await createSleepingDeployment(s, 'api');
  folder = join(s.root, 'project');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'devtool.yml'), `services:\n  api:\n    sync: [".:/app"]\n    forward: ["${FORWARD_PORT}:2222"]\n`);
  // One folder per suspend, each with the files that round changes.
  for (const round of ROUNDS) {
    mkdirSync(join(folder, round), { recursive: true });
    for (const name of ['edited-here', 'deleted-here', 'edited-there', 'deleted-there', 'untouched']) {
      writeFileSync(join(folder, round, `${name}.txt`), `${name}: before the suspend\n`);
    }
  }
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  up = await startUp(['-n', s.namespace], { env, cwd: folder, detached: true });
});

after(async () => {
  for (const rule of rules.splice(0)) spawnSync('iptables', ['-D', ...rule]);
  // A failed test may leave the group stopped: continue it so that it can be killed and end.
  if (up?.proc.pid && up.proc.exitCode === null) signalGroup('SIGCONT');
  await tearDownDev(s, env, [folder]);
});

function signalGroup(signal: NodeJS.Signals): void {
  process.kill(-up.proc.pid!, signal);
}

/** The processes of up's group and their states (T = stopped), from /proc. */
function groupStates(): Map<number, string> {
  const states = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === up.proc.pid) states.set(Number(entry), state!);
    } catch {
      // gone meanwhile
    }
  }
  return states;
}

const inContainer = async (script: string) => {
  const pod = await runningPod(s.core, s.namespace, 'devtool.dev/dev-pod=api');
  return execInPod(s.kc, s.namespace, pod, ['sh', '-c', script], 'api');
};
const readLocal = (name: string) => (existsSync(join(folder, name)) ? readFileSync(join(folder, name), 'utf8') : undefined);

/** The first bytes the forwarded port answers with (the SSH banner), or '' when it does not answer. */
function forwardAnswer(): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(FORWARD_PORT, '127.0.0.1');
    const done = (text: string) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(text);
    };
    const timer = setTimeout(() => done(''), 5000);
    sock.once('data', (d) => done(d.toString()));
    sock.once('error', () => done(''));
    sock.once('close', () => done(''));
  });
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (up.proc.exitCode !== null) throw new Error(`${what}: up exited (${up.proc.exitCode}):\n${up.output()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s; up said:\n${up.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What the container holds of a round's folder: `name=content` per file, sorted. */
async function containerTree(round: string): Promise<string> {
  const r = await inContainer(`cd /app/${round} && for f in $(ls -A | sort); do printf "%s=%s" "$f" "$(cat "$f")"; echo; done`);
  return r.code === 0 ? r.stdout : `exec failed: ${r.stderr}`;
}

function localTree(round: string): string {
  const dir = join(folder, round);
  return readdirSync(dir)
    .sort()
    .map((f) => `${f}=${readFileSync(join(dir, f), 'utf8').replace(/\n$/, '')}\n`)
    .join('');
}

const status = () => runDevtool(['status', '-n', s.namespace], { env, cwd: folder, timeoutMs: 30_000 }).stdout.trim();

/**
 * Every TCP connection `up` has to the API server (its port-forwards among them) stops carrying
 * anything, both ways, as when a laptop wakes on another network: no reset ever comes, only
 * silence. New connections are not affected.
 */
function killNetworkPaths(): void {
  const ports = spawnSync('ss', ['-tnpH', 'state', 'established', '( dport = :6443 )'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.includes(`pid=${up.proc.pid},`))
    .map((l) => l.trim().split(/\s+/)[2]!.split(':').pop()!);
  assert.ok(ports.length > 0, 'up has connections to the API server');
  for (const port of ports) {
    for (const rule of [
      ['OUTPUT', '-p', 'tcp', '--sport', port, '--dport', '6443', '-j', 'DROP'],
      ['OUTPUT', '-p', 'tcp', '--sport', '6443', '--dport', port, '-j', 'DROP'],
    ]) {
      const r = spawnSync('iptables', ['-I', ...rule], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      rules.push(rule);
    }
  }
}

/**
 * One suspend: freeze the group, change files on both sides, continue it after SUSPEND_MS, and
 * check that everything arrives; returns the seconds from SIGCONT to every edit on the other side.
 */
async function suspendRound(round: string, o: { deadPath: boolean }): Promise<number> {
  await waitFor('status 100.00% before the suspend', () => status() === 'Synchronization status: 100.00%', 60_000);
  const members = [...groupStates().keys()];
  assert.ok(members.length >= 2, `up and its local Syncthing are in up's process group (found ${members.join(', ')})`);

  signalGroup('SIGSTOP');
  const stoppedAt = Date.now();
  await waitFor('every process of the group stopped', () => [...groupStates().values()].every((st) => st === 'T'), 5_000);
  if (o.deadPath) killNetworkPaths();

  // This machine: the files change though the processes are frozen.
  writeFileSync(join(folder, round, 'edited-here.txt'), 'edited-here: on this machine during the suspend\n');
  rmSync(join(folder, round, 'deleted-here.txt'));
  writeFileSync(join(folder, round, 'created-here.txt'), 'created-here: on this machine during the suspend\n');
  // The dev container: another path in, while the laptop "sleeps".
  const remote = await inContainer(
    `cd /app/${round} && echo "edited-there: in the container during the suspend" > edited-there.txt && rm deleted-there.txt && ` +
      'echo "created-there: in the container during the suspend" > created-there.txt',
  );
  assert.equal(remote.code, 0, remote.stderr);

  await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + SUSPEND_MS - Date.now())));
  assert.ok(
    [...groupStates().values()].every((st) => st === 'T'),
    'the group stayed stopped for the whole suspend',
  );
  signalGroup('SIGCONT');
  const continuedAt = Date.now();

  const expected =
    'created-here.txt=created-here: on this machine during the suspend\n' +
    'created-there.txt=created-there: in the container during the suspend\n' +
    'edited-here.txt=edited-here: on this machine during the suspend\n' +
    'edited-there.txt=edited-there: in the container during the suspend\n' +
    'untouched.txt=untouched: before the suspend\n';
  // Each side's arrival on its own: the container's edits here, this machine's there.
  let hereAt = 0;
  let thereAt = 0;
  let lastRemote = '';
  await waitFor(
    'every edit on both sides',
    async () => {
      if (!hereAt && localTree(round) === expected) hereAt = Date.now();
      if (!thereAt) {
        lastRemote = await containerTree(round);
        if (lastRemote === expected) thereAt = Date.now();
      }
      return hereAt > 0 && thereAt > 0;
    },
    180_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nhere:\n${localTree(round)}\nthere:\n${lastRemote}`);
  });
  await waitFor('status 100.00%', () => status() === 'Synchronization status: 100.00%', 120_000);
  const synchronizedAt = Date.now();
  await waitFor('the forwarded port answers', async () => (await forwardAnswer()).startsWith('SSH-2.0-'), 60_000);
  const forwardAt = Date.now();
  const arrivedAt = Math.max(hereAt, thereAt);
  const seconds = (at: number) => ((at - continuedAt) / 1000).toFixed(1);
  console.log(
    `${round}: suspend of ${SUSPEND_MS / 1000}s; from SIGCONT, every edit on the other side in ${seconds(arrivedAt)}s ` +
      `(the container's here in ${seconds(hereAt)}s, this machine's there in ${seconds(thereAt)}s), ` +
      `status 100.00% in ${seconds(synchronizedAt)}s, the forward answering in ${seconds(forwardAt)}s`,
  );
  // What up did on resume, for the record: the sleep noticed, the connection checked or redialled.
  const since = new Date(continuedAt - 1000).toISOString();
  const log = readFileSync(join(env.DEVTOOL_HOME!, 'devtool.log'), 'utf8').split('\n');
  console.log(log.filter((l) => l.slice(0, 24) >= since && /dev tunnel|progress: !|local syncthing/.test(l)).join('\n'));

  // No conflict copies: each file changed on one side only.
  const conflictsThere = await inContainer("find /app -name '*.sync-conflict-*'");
  assert.equal(conflictsThere.stdout, '', 'no conflict copy in the container');
  assert.deepEqual(
    readdirSync(folder, { recursive: true }).filter((n) => String(n).includes('.sync-conflict-')),
    [],
    'no conflict copy here',
  );
  assert.doesNotMatch(up.output(), /sync conflict/);

  // Live sync goes on both ways.
  writeFileSync(join(folder, round, 'after.txt'), 'after the suspend, here\n');
  await waitFor(
    'a new local edit in the container',
    async () => (await inContainer(`cat /app/${round}/after.txt 2>/dev/null`)).stdout === 'after the suspend, here\n',
    30_000,
  );
  assert.equal((await inContainer(`echo after the suspend, there > /app/${round}/after-there.txt`)).code, 0);
  await waitFor('a new container edit here', () => readLocal(`${round}/after-there.txt`) === 'after the suspend, there\n', 30_000);
  assert.equal(up.proc.exitCode, null, 'up is still running');
  return (arrivedAt - continuedAt) / 1000;
}

test(`up is frozen for ${SUSPEND_MS / 1000}s with its children, as a suspend does; on SIGCONT it reconnects and both sides' edits arrive`, {
  timeout: 600_000,
}, async () => {
  await suspendRound('plain', { deadPath: false });
});

test('the same, when the network paths of up died during the suspend (no reset ever arrives): it notices the sleep and redials at once', {
  timeout: 600_000,
}, async () => {
  const seconds = await suspendRound('dead-path', { deadPath: true });
  // The SSH keepalive alone (3 unanswered probes, 5 s apart) would take 15 s to notice.
  assert.ok(seconds < 12, `every edit arrived ${seconds}s after SIGCONT`);
});

test('status is below 100.00% while the two Syncthings are not connected, though neither has anything to send', { timeout: 120_000 }, async () => {
  await waitFor('status 100.00%', () => status() === 'Synchronization status: 100.00%', 60_000);
  const devDir = join(env.DEVTOOL_HOME!, 'dev');
  const [state] = readdirSync(devDir).map((d) => join(devDir, d));
  const apiKey = (JSON.parse(readFileSync(join(state!, 'sync-keys.json'), 'utf8')) as { local: { apiKey: string } }).local.apiKey;
  const { port } = JSON.parse(readFileSync(join(state!, 'syncthing-address.json'), 'utf8')) as { port: number };
  const { remoteDevice } = JSON.parse(readFileSync(join(state!, 'sync-runtime.json'), 'utf8')) as { remoteDevice: string };
  // The local end stops talking to the container's, as it does between a wake and its redial.
  const device = async (action: 'pause' | 'resume') => {
    const r = await fetch(`http://127.0.0.1:${port}/rest/system/${action}?device=${remoteDevice}`, { method: 'POST', headers: { 'X-API-Key': apiKey } });
    assert.equal(r.status, 200, await r.text());
  };
  await device('pause');
  try {
    await waitFor('status below 100% while disconnected', () => status() === 'Synchronization status: 99.99%', 30_000);
  } finally {
    await device('resume');
  }
  await waitFor('status 100.00% once connected again', () => status() === 'Synchronization status: 100.00%', 60_000);
});
