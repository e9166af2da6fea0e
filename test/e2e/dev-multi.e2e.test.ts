/**
 * Several dev containers from one folder, on the local cluster: a devtool.yml with two
 * `services` (two Deployments) and a Compose application with two services that mount folders.
 * One `up` brings both up (each swapped, synced into its own container, forwarding its own port),
 * `status` names each, two `up`s of one dev container are refused, `up NAME` still brings up one
 * while another terminal's `up OTHER` runs, `down NAME` ends only that one's session in the `up` of
 * both, a dev container that cannot come up makes `up` restore the others it activated, and `down`
 * restores both Deployments exactly.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lines, runDevtool } from './cli.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';
import { runInPty } from './pty.ts';
import { startUp, tearDownDev, type UpSession } from './up-session.ts';
import { waitFor } from './wait.ts';

const PORT = { api: 29000 + Math.floor(Math.random() * 500), web: 29600 + Math.floor(Math.random() * 500) };

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
let env: NodeJS.ProcessEnv;
let folder: string;
const folders: string[] = [];
const before_: Record<string, k8s.V1Deployment> = {};

before(async () => {
  s = await clusterSandbox('dev-multi');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  await createSleepingDeployment(s, 'api', `${REGISTRY}/node:20`);
  await createSleepingDeployment(s, 'web', `${REGISTRY}/node:20`);
  // web at 2 replicas: down must give each its own count back.
  await apps.patchNamespacedDeployment(
    { name: 'web', namespace: s.namespace, body: { spec: { replicas: 2 } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  for (const name of ['api', 'web']) before_[name] = await apps.readNamespacedDeployment({ name, namespace: s.namespace });
  folder = join(s.root, 'shop');
  for (const name of ['api', 'web']) {
    mkdirSync(join(folder, name), { recursive: true });
    writeFileSync(join(folder, name, 'which.txt'), `${name} source\n`);
  }
  writeFileSync(
    join(folder, 'devtool.yml'),
    `services:\n  api:\n    sync: ["./api:/app"]\n    forward: ["${PORT.api}:8080"]\n  web:\n    sync: ["./web:/app"]\n    forward: ["${PORT.web}:8080"]\n`,
  );
  folders.push(folder);
});

after(() => tearDownDev(s, env, folders));

const devtool = (args: string[], cwd = folder, timeoutMs = 60_000) => runDevtool([args[0]!, '-n', s.namespace, ...args.slice(1)], { env, cwd, timeoutMs });
const inContainer = (devName: string, script: string, cwd = folder) => devtool(['exec', devName, '--', 'sh', '-c', script], cwd);
const mirrors = async () =>
  (await apps.listNamespacedDeployment({ namespace: s.namespace })).items.map((d) => d.metadata!.name!).filter((n) => n.endsWith('-devtool'));

async function httpGet(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
  return res.text();
}

/** Both Deployments exactly as before `up`, and no dev Deployment left. */
async function assertRestored(): Promise<void> {
  for (const name of ['api', 'web']) {
    const now = await apps.readNamespacedDeployment({ name, namespace: s.namespace });
    assert.deepEqual(now.spec, before_[name]!.spec, `${name}'s spec is back`);
    const annotations = (d: k8s.V1Deployment) => Object.keys(d.metadata?.annotations ?? {}).filter((k) => k.startsWith('devtool.dev/'));
    assert.deepEqual(annotations(now), annotations(before_[name]!), `${name} carries no dev-mode annotation`);
  }
  assert.deepEqual(await mirrors(), []);
}

test('one up brings up both dev containers: each swapped, synced and forwarded; status names each; down restores both', { timeout: 600_000 }, async () => {
  const started = Date.now();
  const up = await startUp(['-n', s.namespace], { env, cwd: folder }, 300_000);
  console.log(`up of two dev containers ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  assert.match(up.stdout(), /^dev container api-devtool is ready \(pod api-devtool-/m);
  assert.match(up.stdout(), /^dev container web-devtool is ready \(pod web-devtool-/m);
  assert.match(up.stdout(), new RegExp(`forward  localhost:${PORT.api} -> api:8080`));
  assert.match(up.stdout(), /Forwarding until interrupted \(Ctrl-C\); the dev containers stay active until 'devtool down'/);
  assert.match(up.output(), /^• bringing up 2 dev containers: api, web/m);
  assert.match(up.output(), /^\[api\] • sync \.\/api <-> \/app/m, 'each line says which dev container it is about');
  assert.match(up.output(), /^\[web\] • starting dev container web-devtool/m);
  for (const name of ['api', 'web']) {
    const original = await apps.readNamespacedDeployment({ name, namespace: s.namespace });
    assert.equal(original.spec?.replicas, 0, `${name} is swapped`);
  }

  // Each folder reaches its own container, both ways.
  assert.equal(inContainer('api', 'cat /app/which.txt').stdout, 'api source\n');
  assert.equal(inContainer('web', 'cat /app/which.txt').stdout, 'web source\n');
  writeFileSync(join(folder, 'api', 'edit.txt'), 'edited for api\n');
  writeFileSync(join(folder, 'web', 'edit.txt'), 'edited for web\n');
  await waitFor('the api edit in the api container', () => inContainer('api', 'cat /app/edit.txt').stdout === 'edited for api\n', 60_000);
  await waitFor('the web edit in the web container', () => inContainer('web', 'cat /app/edit.txt').stdout === 'edited for web\n', 60_000);
  assert.equal(inContainer('web', 'echo made in web > /app/back.txt').code, 0);
  await waitFor('a file made in web, in ./web', () => existsSync(join(folder, 'web', 'back.txt')), 60_000);
  assert.equal(readFileSync(join(folder, 'web', 'back.txt'), 'utf8'), 'made in web\n');
  assert.ok(!existsSync(join(folder, 'api', 'back.txt')), "web's file stays out of ./api");

  // Each forward reaches its own container.
  for (const name of ['api', 'web'] as const) {
    const script = `nohup node -e "require('http').createServer((q,r)=>r.end('${name}')).listen(8080)" >/dev/null 2>&1 &`;
    assert.equal(inContainer(name, script).code, 0);
  }
  await waitFor('api through its forward', async () => (await httpGet(PORT.api).catch(() => '')) === 'api', 30_000);
  await waitFor('web through its forward', async () => (await httpGet(PORT.web).catch(() => '')) === 'web', 30_000);

  // status: one line each, named; with a name, as with one dev container.
  await waitFor('both at 100%', () => devtool(['status']).stdout === 'api: Synchronization status: 100.00%\nweb: Synchronization status: 100.00%\n', 60_000);
  assert.deepEqual(lines(devtool(['status', 'web']).stdout), ['Synchronization status: 100.00%']);

  // A second up of either is refused; nothing changes.
  const again = devtool(['up', 'web']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^Error: 'devtool up' is already running for web from this folder \(pid \d+\)/m);
  const all = devtool(['up']);
  assert.equal(all.code, 1);
  assert.match(
    all.stderr,
    /'devtool up' is already running for api from this folder \(pid \d+\); use that session, or stop it first; bring up the others one by one/,
  );

  // Ctrl-C (SIGTERM here) ends both sessions; both dev containers stay active.
  await up.stop();
  assert.equal(up.proc.exitCode, 0, up.output());
  assert.match(up.output(), /The dev containers stay active: 'devtool down' restores api, web/);
  assert.deepEqual((await mirrors()).sort(), ['api-devtool', 'web-devtool']);
  assert.match(devtool(['status']).stderr, /file sync is not running for any dev container from this folder \(api, web\)/);

  // In a terminal: no shell (which one?), how to open one instead; Ctrl-C ends it, the dev containers stay.
  const pty = runInPty(['up', '-n', s.namespace], { cwd: folder, env });
  await pty.waitFor(/no shell opens here: open one in another terminal with 'devtool exec api -- sh' or 'devtool exec web -- sh'/, 240_000);
  assert.equal(inContainer('web', 'cat /app/edit.txt').stdout, 'edited for web\n');
  pty.type('\u0003');
  assert.equal(await pty.exit(60_000), 0, pty.output());
  assert.match(pty.output(), /The dev containers stay active: 'devtool down' restores api, web/);
  assert.doesNotMatch(pty.output(), /local sync service stopped/, 'Ctrl-C reaches the local Syncthings too: no session takes that for a crash');

  // Two terminals, one dev container each: both work side by side.
  const [upApi, upWeb] = await Promise.all([
    startUp(['api', '-n', s.namespace], { env, cwd: folder }, 300_000),
    startUp(['web', '-n', s.namespace], { env, cwd: folder }, 300_000),
  ]);
  assert.doesNotMatch(upApi.stdout(), /web-devtool/);
  writeFileSync(join(folder, 'api', 'second.txt'), 'second session\n');
  await waitFor('an edit through up api', () => inContainer('api', 'cat /app/second.txt').stdout === 'second session\n', 60_000);
  await waitFor('status of both sessions', () => /^api: .*\nweb: Synchronization status: /.test(devtool(['status']).stdout), 60_000);

  // down without a name ends both `up`s and restores both Deployments exactly.
  const down = devtool(['down'], folder, 180_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, /✓ dev container api deactivated/);
  assert.match(down.stderr, /✓ dev container web deactivated/);
  // Each `up` ends on down's SIGTERM by itself; one that had to be killed failed this once in CI.
  const ended = (u: UpSession) => u.proc.exitCode !== null || u.proc.signalCode !== null;
  await waitFor('both ups ended', () => ended(upApi) && ended(upWeb), 30_000).catch((err: Error) => {
    throw new Error(`${err.message}\ndown said:\n${down.stderr}\nup api said:\n${upApi.output()}\nup web said:\n${upWeb.output()}`);
  });
  assert.doesNotMatch(down.stderr, /so it was killed/, 'an up ends within the grace after SIGTERM');
  assert.deepEqual([upApi.proc.exitCode, upWeb.proc.exitCode], [0, 0], `up api:\n${upApi.output()}\nup web:\n${upWeb.output()}`);
  await assertRestored();
});

test('down NAME while one up runs both: that one is restored, the other keeps syncing in the same up, which ends with the last', {
  timeout: 600_000,
}, async () => {
  const up = await startUp(['-n', s.namespace], { env, cwd: folder }, 300_000);
  try {
    await downOneThenTheOther(up);
  } finally {
    // Whatever failed, the next tests start from both Deployments restored.
    if (up.proc.exitCode === null || (await mirrors()).length > 0) devtool(['down'], folder, 180_000);
  }
});

async function downOneThenTheOther(up: UpSession): Promise<void> {
  const down = devtool(['down', 'api'], folder, 180_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, /'devtool up' let go of api; web goes on syncing/);
  assert.match(down.stderr, /✓ dev container api deactivated/);
  assert.doesNotMatch(down.stderr, /without sync or forwards|stopped 'devtool up'/, 'the up of both is not stopped');
  await waitFor("up says api's session ended", () => /\[api\] • 'devtool down api' ended its sync and forwards here; web goes on/.test(up.output()), 30_000);
  assert.equal(up.proc.exitCode, null, up.output());
  assert.deepEqual((await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).spec, before_.api!.spec, 'api is given back');
  assert.equal((await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace })).spec?.replicas, 0, 'web is still swapped');
  assert.deepEqual(await mirrors(), ['web-devtool']);

  // web still syncs both ways through the same up.
  writeFileSync(join(folder, 'web', 'after-down.txt'), 'web still syncs\n');
  await waitFor('an edit after down api, in web', () => inContainer('web', 'cat /app/after-down.txt').stdout === 'web still syncs\n', 60_000);
  assert.equal(inContainer('web', 'echo back from web > /app/back-after-down.txt').code, 0);
  await waitFor('a file made in web after down api, here', () => existsSync(join(folder, 'web', 'back-after-down.txt')), 60_000);
  await waitFor('web at 100%', () => devtool(['status', 'web']).stdout === 'Synchronization status: 100.00%\n', 60_000);
  assert.equal(devtool(['up', 'web']).code, 1, 'web is still held by that up');
  // web's forward still answers; api's local port is given up.
  const server = `nohup node -e "require('http').createServer((q,r)=>r.end('web')).listen(8080)" >/dev/null 2>&1 &`;
  assert.equal(inContainer('web', server).code, 0);
  await waitFor('web through its forward after down api', async () => (await httpGet(PORT.web).catch(() => '')) === 'web', 30_000);
  await assert.rejects(httpGet(PORT.api), "api's forward is closed");

  // down of the last one ends that up.
  const last = devtool(['down', 'web'], folder, 180_000);
  assert.equal(last.code, 0, last.stderr);
  await waitFor('up ended with its last dev container', () => up.proc.exitCode !== null, 30_000);
  assert.equal(up.proc.exitCode, 0, up.output());
  await assertRestored();
}

test('a dev container that cannot come up: up names it in one line and restores the others it activated', { timeout: 600_000 }, async () => {
  const broken = join(s.root, 'broken');
  for (const name of ['api', 'web', 'bad']) mkdirSync(join(broken, name), { recursive: true });
  folders.push(broken);
  // A name with nothing to swap fails before any swap.
  writeFileSync(join(broken, 'devtool.yml'), 'services:\n  api:\n    sync: ["./api:/app"]\n  ghost:\n    sync: ["./api:/srv"]\n');
  const ghost = devtool(['up'], broken);
  assert.equal(ghost.code, 1, ghost.stderr);
  assert.match(
    lines(ghost.stderr).at(-1)!,
    /^Error: dev container ghost: no Deployment or StatefulSet named "ghost" in namespace \S+: .*; nothing was changed$/,
  );
  assert.doesNotMatch(ghost.stderr, /scaling/);
  await assertRestored();

  // bad's dev image cannot be pulled: api and web come up, bad is swapped and fails; all three are given back.
  await createSleepingDeployment(s, 'bad');
  const badBefore = await apps.readNamespacedDeployment({ name: 'bad', namespace: s.namespace });
  writeFileSync(
    join(broken, 'devtool.yml'),
    'services:\n  api:\n    sync: ["./api:/app"]\n  bad:\n    image: localhost:5000/devtool-e2e-no-such-image:1\n    sync: ["./bad:/app"]\n' +
      '  web:\n    sync: ["./web:/app"]\n',
  );
  const r = devtool(['up'], broken, 400_000);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    lines(r.stderr).at(-1)!,
    /^Error: dev container bad did not come up: dev container bad-devtool failed: .*; restored api, bad, web \(nothing this 'up' activated is left\)$/,
  );
  assert.match(r.stderr, /^\[web\] • deployment web restored to 2 replicas$/m);
  assert.match(r.stderr, /^\[bad\] • deployment bad restored to 1 replica$/m);
  await assertRestored();
  assert.deepEqual((await apps.readNamespacedDeployment({ name: 'bad', namespace: s.namespace })).spec, badBefore.spec);
  await apps.deleteNamespacedDeployment({ name: 'bad', namespace: s.namespace });
});

test('a Compose application with two services that mount folders: one up, each folder in its own container, down restores both', {
  timeout: 600_000,
}, async () => {
  const app = join(s.root, 'compose-shop');
  folders.push(app);
  for (const name of ['cart', 'shelf']) {
    mkdirSync(join(app, name), { recursive: true });
    writeFileSync(join(app, name, 'which.txt'), `${name} code\n`);
  }
  writeFileSync(
    join(app, 'compose.yaml'),
    `services:
  cart:
    image: ${REGISTRY}/debian:bookworm
    command: [sleep, infinity]
    volumes: ["./cart:/code"]
  shelf:
    image: ${REGISTRY}/debian:bookworm
    command: [sleep, infinity]
    volumes: ["./shelf:/code"]
  cache:
    image: ${REGISTRY}/redis:7
`,
  );
  const up = await startUp(['-n', s.namespace], { env, cwd: app }, 400_000);
  assert.match(up.output(), /cart is not deployed in namespace \S+ yet: deploying environment compose-shop first/);
  assert.match(up.stdout(), /^dev container cart-devtool is ready/m);
  assert.match(up.stdout(), /^dev container shelf-devtool is ready/m);
  assert.equal(inContainer('cart', 'cat /code/which.txt', app).stdout, 'cart code\n');
  assert.equal(inContainer('shelf', 'cat /code/which.txt', app).stdout, 'shelf code\n');
  writeFileSync(join(app, 'shelf', 'edit.txt'), 'shelf edit\n');
  await waitFor('the shelf edit in shelf', () => inContainer('shelf', 'cat /code/edit.txt', app).stdout === 'shelf edit\n', 60_000);
  assert.notEqual(inContainer('cart', 'cat /code/edit.txt', app).code, 0, "shelf's edit is not in cart");
  const status = devtool(['status'], app);
  assert.match(status.stdout, /^cart: Synchronization status: [\d.]+%\nshelf: Synchronization status: [\d.]+%\n$/);
  assert.equal((await apps.readNamespacedDeployment({ name: 'cache', namespace: s.namespace })).spec?.replicas, 1, 'the other service runs as deployed');

  // down while up runs: it ends that up and restores both.
  const down = devtool(['down'], app, 180_000);
  assert.equal(down.code, 0, down.stderr);
  await waitFor('up ended', () => up.proc.exitCode !== null, 30_000);
  for (const name of ['cart', 'shelf']) assert.equal((await apps.readNamespacedDeployment({ name, namespace: s.namespace })).spec?.replicas, 1);
  assert.deepEqual(await mirrors(), []);
});
