/**
 * `up`, `exec` and `down` on the local cluster: a node Deployment + Service in a throwaway
 * namespace and a devtool.yml with a services entry. `up` runs without a terminal (it prints the
 * state and keeps the forwards open until signalled).
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lines, runDevtool } from './cli.ts';
import { runInPty } from './pty.ts';
import { killUpSessions, startUp } from './up-session.ts';
import { waitFor } from './wait.ts';
import { clusterSandbox, createQuota, deleteNamespace, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';

const FORWARD = 28000 + Math.floor(Math.random() * 1000);
const REVERSE_LOCAL = FORWARD + 1000;

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
let folder: string;
let env: NodeJS.ProcessEnv;
let before_: k8s.V1Deployment;
const children: ChildProcess[] = [];

const server = (text: string, port: number) => `require('http').createServer((q,r)=>r.end('${text}')).listen(${port})`;

before(async () => {
  s = await clusterSandbox('dev-up');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              {
                name: 'web',
                image: `${REGISTRY}/node:20`,
                command: ['node', '-e', server('original', 8080)],
                env: [{ name: 'FROM_ORIGINAL', value: 'yes' }],
                readinessProbe: { tcpSocket: { port: 8080 } },
              },
            ],
          },
        },
      },
    },
  });
  await s.core.createNamespacedService({
    namespace: s.namespace,
    body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 8080 }] } },
  });
  before_ = await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace });
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'devtool.yml'),
    `services:\n  web:\n    forward: ["${FORWARD}:8080"]\n    reverse: ["9000:${REVERSE_LOCAL}"]\n    environment: {FROM_MANIFEST: "1"}\n`,
  );
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(async () => {
  for (const c of children) c.kill('SIGKILL');
  killUpSessions();
  if (s) await deleteNamespace(s);
});

// Options go before the command's words: everything after `--` is the remote command.
const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });

/** One GET through a forward; bounded, so a request caught in a reconnect cannot stall waitFor. */
async function httpGet(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
  return res.text();
}

test('exec with nothing active fails with one line', () => {
  const r = dev(['exec', '--', 'true']);
  assert.equal(r.code, 1);
  assert.deepEqual(lines(r.stderr), ["Error: no dev container is active for web from this folder: run 'devtool up web' first"]);
});

/** The original as the test set it up: 2 replicas, no dev annotation, and no dev Deployment beside it. */
async function assertUntouched(): Promise<void> {
  const original = await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace });
  assert.equal(original.spec?.replicas, 2);
  assert.equal(original.metadata?.annotations?.['devtool.dev/dev-folder'], undefined);
  await assert.rejects(apps.readNamespacedDeployment({ name: 'web-devtool', namespace: s.namespace }));
}

test('a write the swap needs is refused (a quota of no Secrets): up fails before the swap, the original keeps running', { timeout: 120_000 }, async () => {
  // Before any up of this file: the namespace holds no Secret, so the dev container's would be the first.
  await createQuota(s, 'no-secrets', { secrets: '0' });
  try {
    const r = dev(['up'], 90_000);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      lines(r.stderr).at(-1)!,
      /^Error: cannot apply Secret\/web-devtool\S* in namespace \S+: .*exceeded quota.*\(tried before the swap: deployment web was not scaled down\)$/,
    );
    assert.doesNotMatch(r.stderr, /scaling deployment web to 0/);
    await assertUntouched();
  } finally {
    await s.core.deleteNamespacedResourceQuota({ name: 'no-secrets', namespace: s.namespace });
  }
});

test('a forward port in use on this machine: up fails before the swap, the original keeps running', { timeout: 120_000 }, async () => {
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(FORWARD, '127.0.0.1', r));
  try {
    const r = dev(['up'], 90_000);
    assert.equal(r.code, 1, r.stderr);
    assert.match(lines(r.stderr).at(-1)!, new RegExp(`^Error: cannot forward localhost:${FORWARD}: the port is in use on this machine`));
    assert.doesNotMatch(r.stderr, /scaling deployment web to 0/);
    await assertUntouched();
  } finally {
    busy.close();
  }
});

test('a dev pod that cannot start: up undoes the swap and says so', { timeout: 240_000 }, async () => {
  // An agent image that is not a devtool-bin image: the swap happens, then the dev pod's init container cannot start.
  // (One that cannot be pulled is no failure: the agent is then copied in, dev-agent-copy.e2e.test.ts.)
  const r = runDevtool(['up', '-n', s.namespace], { env: { ...env, DEVTOOL_BIN_IMAGE: `${REGISTRY}/pause:devtool` }, cwd: folder, timeoutMs: 200_000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /scaling deployment web to 0/);
  assert.match(lines(r.stderr).at(-1)!, /^Error: .*; restored web, so nothing this 'up' changed is left$/);
  await assertUntouched();
});

test('Ctrl-C while up starts (in a terminal): exit 130 and a line saying what is left and how to go on or undo it', { timeout: 240_000 }, async () => {
  const pty = runInPty(['up', '-n', s.namespace], { cwd: folder, env });
  await pty.waitFor('starting dev container web-devtool', 120_000);
  pty.type('\u0003');
  assert.equal(await pty.exit(30_000), 130, pty.output());
  assert.match(
    pty.output(),
    /Error: interrupted: web is in development, its dev container perhaps still starting: 'devtool up web' goes on from there, 'devtool down web' restores it/,
  );
  const down = dev(['down'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  await assertUntouched();
});

test('up activates, exec/forward/reverse work, a second up is refused, down after SIGKILL restores', { timeout: 480_000 }, async () => {
  const { proc, stdout } = await startUp(['-n', s.namespace], { env, cwd: folder });
  assert.match(stdout(), /dev container web-devtool is ready \(pod web-devtool-/);

  const original = await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace });
  assert.equal(original.spec?.replicas, 0);
  assert.equal(original.metadata?.annotations?.['devtool.dev/dev-replicas'], '2');
  assert.ok(original.metadata?.annotations?.['devtool.dev/dev-folder']);
  const mirror = await apps.readNamespacedDeployment({ name: 'web-devtool', namespace: s.namespace });
  assert.equal(mirror.spec?.template.spec?.initContainers?.[0]?.image, ensureAgentImage());
  const pods = await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: 'devtool.dev/dev-pod=web' });
  const pod = pods.items.find((p) => p.status?.phase === 'Running')!.metadata!.name!;

  const e = dev(['exec', '--', 'sh', '-c', 'echo $HOSTNAME $FROM_ORIGINAL $FROM_MANIFEST; exit 7']);
  assert.equal(e.code, 7, e.stderr);
  assert.equal(e.stdout.trim(), `${pod} yes 1`);

  // A forwarded port: a server started in the dev container answers on this machine.
  const bg = dev(['exec', '--', 'sh', '-c', `nohup node -e "${server('dev', 8080)}" >/dev/null 2>&1 &`]);
  assert.equal(bg.code, 0, bg.stderr);
  await waitFor('the forward to answer from the dev container', async () => (await httpGet(FORWARD).catch(() => '')) === 'dev');

  // A reverse forward: a server on this machine answers inside the dev container (no curl there).
  const local = spawn(process.execPath, ['-e', server('from-laptop', REVERSE_LOCAL)], { stdio: 'ignore' });
  children.push(local);
  await new Promise((r) => setTimeout(r, 500));
  const rev = dev(['exec', '--', 'node', '-e', "require('http').get('http://127.0.0.1:9000',r=>r.pipe(process.stdout))"]);
  assert.equal(rev.stdout, 'from-laptop', rev.stderr);
  local.kill();

  const second = dev(['up']);
  assert.equal(second.code, 1);
  assert.match(second.stderr, /'devtool up' is already running for web from this folder \(pid \d+\)/);

  // The forward comes back by itself after the dev pod is replaced.
  await s.core.deleteNamespacedPod({ name: pod, namespace: s.namespace });
  await waitFor(
    'a second server to start in the dev container',
    async () => dev(['exec', '--', 'sh', '-c', `nohup node -e "${server('dev2', 8080)}" >/dev/null 2>&1 &`]).code === 0,
    120_000,
  );
  await waitFor('the forward to answer from the second server', async () => (await httpGet(FORWARD).catch(() => '')) === 'dev2', 60_000);

  proc.kill('SIGKILL');
  const down = dev(['down'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  const restored = await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace });
  assert.deepEqual(restored.spec, before_.spec);
  assert.deepEqual(withoutRevision(restored.metadata?.annotations), withoutRevision(before_.metadata?.annotations));
  await assert.rejects(apps.readNamespacedDeployment({ name: 'web-devtool', namespace: s.namespace }));
  await assert.rejects(s.core.readNamespacedSecret({ name: 'web-devtool', namespace: s.namespace }));
  // The claim stays without --volumes...
  await s.core.readNamespacedPersistentVolumeClaim({ name: 'web-devtool', namespace: s.namespace });
  const gone = dev(['exec', '--', 'true']);
  assert.equal(gone.code, 1);
  assert.equal(lines(gone.stderr).length, 1);
  // ...and goes with it.
  const v = dev(['down', '--volumes'], 120_000);
  assert.equal(v.code, 0, v.stderr);
  await assert.rejects(s.core.readNamespacedPersistentVolumeClaim({ name: 'web-devtool', namespace: s.namespace }));
});

test('the agent is copied onto the claim once: the next dev pod starts without the init container, and one whose claim lost it gets it again', {
  timeout: 480_000,
}, async (t) => {
  const claim = () => s.core.readNamespacedPersistentVolumeClaim({ name: 'web-devtool', namespace: s.namespace });
  const copies = async () => {
    const mirror = await apps.readNamespacedDeployment({ name: 'web-devtool', namespace: s.namespace });
    return (mirror.spec?.template.spec?.initContainers ?? []).some((c) => c.name === 'devtool-bin');
  };
  const podName = () => dev(['exec', '--', 'sh', '-c', 'echo $HOSTNAME']).stdout.trim();

  // A new claim: the init container copies the agent, and `up` records that on the claim.
  let session = await startUp(['-n', s.namespace], { env, cwd: folder });
  t.after(() => session.stop());
  assert.equal(await copies(), true);
  const recorded = (await claim()).metadata?.annotations?.['devtool.dev/agent-installed'];
  assert.match(recorded ?? '', /^agent-[0-9a-f]{12}$/);
  const firstPod = podName();
  // `up` again without `down`: the running dev pod is kept as it is (no roll to the other form).
  await session.stop();
  session = await startUp(['-n', s.namespace], { env, cwd: folder });
  assert.equal(podName(), firstPod);
  assert.equal(await copies(), true);
  await session.stop();
  assert.equal(dev(['down'], 120_000).code, 0);
  assert.equal((await claim()).metadata?.annotations?.['devtool.dev/agent-installed'], recorded, 'the claim keeps the record through down');

  // The next dev pod runs the agent from the claim, read-only.
  session = await startUp(['-n', s.namespace], { env, cwd: folder });
  assert.equal(await copies(), false);
  const e = dev(['exec', '--', 'sh', '-c', 'echo $FROM_MANIFEST; touch /devtool/bin/x']);
  assert.equal(e.stdout.trim(), '1', e.stderr);
  assert.notEqual(e.code, 0, 'the agent cannot be changed from the dev container');
  assert.match(e.stderr, /Read-only file system/);
  await session.stop();
  assert.equal(dev(['down'], 120_000).code, 0);

  // The claim loses its content (the record stays): the dev pod cannot exec the agent, so `up`
  // copies it again instead of failing.
  await s.core.createNamespacedPod({
    namespace: s.namespace,
    body: {
      metadata: { name: 'wipe' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'wipe',
            image: `${REGISTRY}/debian:bookworm`,
            command: ['sh', '-c', 'ls -d /claim/state/agent-* && rm -rf /claim/state/agent-*'],
            volumeMounts: [{ name: 'c', mountPath: '/claim' }],
          },
        ],
        volumes: [{ name: 'c', persistentVolumeClaim: { claimName: 'web-devtool' } }],
      },
    },
  });
  await waitFor(
    'pod wipe to succeed',
    async () => (await s.core.readNamespacedPod({ name: 'wipe', namespace: s.namespace })).status?.phase === 'Succeeded',
    120_000,
  );
  await s.core.deleteNamespacedPod({ name: 'wipe', namespace: s.namespace, gracePeriodSeconds: 0 });
  session = await startUp(['-n', s.namespace], { env, cwd: folder });
  assert.equal(await copies(), true);
  assert.equal(dev(['exec', '--', 'true']).code, 0);
  assert.match(readFileSync(join(env.DEVTOOL_HOME!, 'devtool.log'), 'utf8'), /finds no agent on claim web-devtool: the init container copies it again/);
  await session.stop();
  assert.equal(dev(['down', '--volumes'], 120_000).code, 0);
});

function withoutRevision(a: Record<string, string> | undefined): Record<string, string> {
  const { 'deployment.kubernetes.io/revision': _r, ...rest } = a ?? {};
  return rest;
}

/**
 * Whether process `pid` still runs. This test process is the `up`'s parent and does not reap it
 * while runDevtool blocks: an ended `up` is a zombie until then, which counts as gone.
 */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2)[0]!);
  } catch {
    return false;
  }
}

test('down while up is running stops the up session too', { timeout: 300_000 }, async () => {
  const { proc } = await startUp(['-n', s.namespace], { env, cwd: folder });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const down = dev(['down', '--volumes'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, new RegExp(`stopped 'devtool up' \\(pid ${proc.pid}\\)\n`));
  assert.equal(running(proc.pid!), false, 'the up is gone when down says it stopped');
  assert.equal(await exited, 0, 'up ends cleanly on the SIGTERM down sends');
  await assert.rejects(apps.readNamespacedDeployment({ name: 'web-devtool', namespace: s.namespace }));
});

test('up ends at once on SIGTERM while it is reconnecting to a dev pod that is gone', { timeout: 300_000 }, async () => {
  const session = await startUp(['-n', s.namespace], { env, cwd: folder });
  // No dev pod to come back to (as when `down` has removed it before it stops this `up`): the
  // tunnel keeps reconnecting, and the local Syncthing keeps dialing through it.
  await apps.deleteNamespacedDeployment({ name: 'web-devtool', namespace: s.namespace });
  for (let i = 0; i < 300 && !session.output().includes('connection to the dev container lost; reconnecting'); i++)
    await new Promise((r) => setTimeout(r, 100));
  assert.match(session.output(), /connection to the dev container lost; reconnecting/);
  // A client of the forwarded port meanwhile: it waits for the next connection (up to 30 s).
  const client = connect(FORWARD, '127.0.0.1');
  client.on('error', () => undefined);
  await new Promise((r) => setTimeout(r, 2000));
  const started = Date.now();
  await session.stop();
  // Waiting callers' 30 s timers and a handshake in progress once kept it alive that long.
  assert.ok(Date.now() - started < 5000, `up took ${Date.now() - started} ms to end after SIGTERM`);
  assert.equal(session.proc.exitCode, 0);
  client.destroy();
  assert.equal(dev(['down', '--volumes'], 120_000).code, 0);
});

test('down kills an up that does not end on SIGTERM, and says so only once it is gone', {
  timeout: 300_000,
  skip: process.platform !== 'linux' && 'reads /proc',
}, async () => {
  const { proc } = await startUp(['-n', s.namespace], { env, cwd: folder });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
  // Stopped, it cannot act on SIGTERM (as an `up` stuck in its clean-up would not end).
  proc.kill('SIGSTOP');
  const down = dev(['down', '--volumes'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, new RegExp(`stopped 'devtool up' \\(pid ${proc.pid}\\): it had not ended 5s after SIGTERM, so it was killed`));
  assert.doesNotMatch(down.stderr, /still be running/);
  assert.equal(running(proc.pid!), false, 'the up is gone when down says it stopped');
  assert.equal(await exited, 'SIGKILL');
  await assert.rejects(apps.readNamespacedDeployment({ name: 'web-devtool', namespace: s.namespace }));
});

test('restart gives the dev container a new pod, and exec follows it', { timeout: 420_000 }, async () => {
  const { proc } = await startUp(['-n', s.namespace], { env, cwd: folder });
  const hostnameNow = () => dev(['exec', '--', 'sh', '-c', 'echo $HOSTNAME']);
  const first = hostnameNow();
  assert.equal(first.code, 0, first.stderr);
  const r = dev(['restart'], 360_000);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /✓ web-devtool restarted in namespace /);
  const second = hostnameNow();
  assert.equal(second.code, 0, second.stderr);
  assert.notEqual(second.stdout.trim(), first.stdout.trim(), 'exec reaches the new pod');

  const down = dev(['down', '--volumes'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  await new Promise((resolve) => (proc.exitCode !== null ? resolve(null) : proc.once('exit', resolve)));
  const none = dev(['restart']);
  assert.equal(none.code, 1);
  assert.deepEqual(lines(none.stderr), ["Error: no dev container is active for web from this folder: run 'devtool up web' first"]);
});
