/**
 * `up` deploys what it develops: on the local cluster, a manifest application that is not deployed
 * yet is deployed by `up` itself (its deploy commands, the environment recorded), a deployed one is
 * left alone unless --deploy; and a Compose application with no devtool.yml is deployed and
 * developed from its Compose file, its host-path volume synchronized and its published port
 * forwarded.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { strFromU8, unzipSync } from 'fflate';
import { runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { runInPty } from './pty.ts';
import { clusterSandbox, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let env: NodeJS.ProcessEnv;
let apps: k8s.AppsV1Api;
const folders: string[] = [];

before(async () => {
  s = await clusterSandbox('dev-deploy');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, folders));

/** Runs `up` until it is ready, then stops it (the dev container stays); resolves with what it printed. */
async function upUntilReady(cwd: string, args: string[] = []): Promise<string> {
  const up = await startUp(['-n', s.namespace, ...args], { env, cwd }, 300_000);
  await up.stop();
  return up.output();
}

async function waitFor(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const deployment = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: 2
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: ${name}, image: ${REGISTRY}/debian:bookworm, command: [sleep, infinity]}]}
`;

test('up deploys a manifest application that is not deployed yet; a deployed one only with --deploy', { timeout: 600_000 }, async () => {
  const cwd = join(s.root, 'shop');
  mkdirSync(cwd, { recursive: true });
  folders.push(cwd);
  writeFileSync(join(cwd, 'k8s.yaml'), deployment('web'));
  writeFileSync(join(cwd, 'devtool.yml'), `deploy:\n  - kubectl apply -f k8s.yaml\nservices:\n  web:\n    sync: [".:/app"]\n`);

  const first = await upUntilReady(cwd);
  assert.match(first, /web is not deployed in namespace \S+ yet: deploying environment shop first/);
  assert.match(first, /deployment\.apps\/web created/, "the deploy command's output is shown");
  const record = await s.core.readNamespacedConfigMap({ name: 'devtool-env-shop', namespace: s.namespace });
  assert.equal(record.data?.['status'], 'deployed');
  const web = await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace });
  assert.equal(web.spec?.replicas, 0, 'then swapped for the dev container');
  assert.equal(web.metadata?.labels?.['devtool.dev/environment'], 'shop', 'created through the labelling proxy');

  const second = await upUntilReady(cwd);
  assert.doesNotMatch(second, /deploying environment/, 'a deployed application is not redeployed');

  const forced = await upUntilReady(cwd, ['--deploy']);
  assert.match(forced, /deploying environment shop \(--deploy\)/);
  assert.match(forced, /deployment\.apps\/web (configured|unchanged)/);
  assert.equal((await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace })).spec?.replicas, 0, 'still in dev mode after the redeploy');

  const down = runDevtool(['down', '-n', s.namespace], { env, cwd, timeoutMs: 120_000 });
  assert.equal(down.code, 0, down.stderr);
  assert.equal((await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace })).spec?.replicas, 2, 'down restores the deployed replicas');
});

test('--deploy with nothing to deploy is one line, and nothing changes', async () => {
  const cwd = join(s.root, 'nodeploy');
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, 'devtool.yml'), 'services:\n  nothing:\n    sync: [".:/app"]\n');
  const r = runDevtool(['up', '-n', s.namespace, '--deploy'], { env, cwd, timeoutMs: 60_000 });
  assert.equal(r.code, 1);
  assert.equal(r.stderr.trim(), 'Error: --deploy: devtool.yml has no deploy section to run');
});

test('a Compose application: up deploys it and develops the service that mounts a host folder', { timeout: 600_000 }, async () => {
  const cwd = join(s.root, 'compose-app');
  mkdirSync(join(cwd, 'src'), { recursive: true });
  folders.push(cwd);
  writeFileSync(join(cwd, 'src', 'index.txt'), 'local source\n');
  writeFileSync(
    join(cwd, 'compose.yaml'),
    `services:
  api:
    image: ${REGISTRY}/debian:bookworm
    command: [sleep, infinity]
    working_dir: /code
    volumes: ["./src:/code/src"]
    ports: ["18090:2222"]
  cache:
    image: ${REGISTRY}/redis:7
`,
  );
  // A published port is a public endpoint: deploying it needs the domain endpoints live under.
  env.DEVTOOL_ENDPOINT_DOMAIN = 'apps.example.test';
  const out = await upUntilReady(cwd);
  assert.match(out, /api is not deployed in namespace \S+ yet: deploying environment compose-app first/);
  assert.match(out, /forward +localhost:18090 -> api:2222/);
  assert.match(out, /environment compose-app deployed: https:\/\/api-dev-deploy-\w+\.apps\.example\.test/, "the published port's endpoint is named");
  assert.match(out, /sync +\S*compose-app\/src <-> \/code\/src/);
  const cache = await apps.readNamespacedDeployment({ name: 'cache', namespace: s.namespace });
  assert.equal(cache.spec?.replicas, 1, 'the other services run as deployed');

  const exec = (script: string) => runDevtool(['exec', '-n', s.namespace, '--', 'sh', '-c', script], { env, cwd, timeoutMs: 60_000 });
  assert.equal(exec('cat /code/src/index.txt').stdout, 'local source\n');
  assert.equal(exec('pwd').stdout.trim(), '/code', "the service's working_dir");

  // The sync runs while up does: start it again and make a change in the container.
  const again = await startUp(['-n', s.namespace], { env, cwd });
  assert.equal(exec('echo from the container > /code/src/made-there.txt').code, 0);
  await waitFor(
    'container file locally',
    () => existsSync(join(cwd, 'src/made-there.txt')) && readFileSync(join(cwd, 'src/made-there.txt'), 'utf8') === 'from the container\n',
  );
  await again.stop();

  // doctor without a name looks at the Compose application's dev containers, as up finds them.
  const doctor = runDevtool(['doctor', '-n', s.namespace], { env, cwd, timeoutMs: 120_000 });
  assert.equal(doctor.code, 0, doctor.stderr);
  const zip = unzipSync(readFileSync(doctor.stdout.trim()));
  const meta = JSON.parse(strFromU8(zip['metadata.json']!)) as { devContainers: Record<string, { state: string }>; manifest: string };
  assert.deepEqual(Object.keys(meta.devContainers), ['api']);
  assert.equal(meta.devContainers['api']!.state, 'active');
  assert.equal(meta.manifest, 'compose.yaml');
  assert.ok(zip['remote/api/pod.json'], `the dev pod's state is collected: ${Object.keys(zip).join(', ')}`);
  assert.match(strFromU8(zip['manifest-summary.yml']!), /^ {2}api:$/m);

  // In a terminal, up opens a shell in the dev container, in the service's working_dir; leaving it keeps the dev container.
  const pty = runInPty(['up', '-n', s.namespace], { cwd, env });
  await pty.waitFor(/dev container api-devtool is ready/, 240_000);
  await pty.waitFor(/[#$] $/m, 60_000);
  pty.type('echo "in $(pwd): $(cat src/index.txt) $((6*7))"\r');
  await pty.waitFor('in /code: local source 42', 30_000);
  pty.type('exit\r');
  assert.equal(await pty.exit(60_000), 0, pty.output());
  assert.match(pty.output(), /The dev container stays active: 'devtool down' restores api/);

  // A service that mounts no folder is no dev container, and the error says what makes one.
  const wrong = runDevtool(['up', 'cache', '-n', s.namespace], { env, cwd, timeoutMs: 60_000 });
  assert.equal(wrong.code, 2);
  assert.equal(
    wrong.stderr.trim(),
    `Error: compose.yaml has no dev container "cache": the services that mount a host folder are api (a service becomes one by mounting a folder, ` +
      `e.g. volumes: ['./src:/app/src'])`,
  );

  const down = runDevtool(['down', '-n', s.namespace], { env, cwd, timeoutMs: 120_000 });
  assert.equal(down.code, 0, down.stderr);
  assert.equal((await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).spec?.replicas, 1);

  // The dev container's claim is one of the application's volumes: destroy keeps it, --volumes deletes it.
  const claims = async () => (await s.core.listNamespacedPersistentVolumeClaim({ namespace: s.namespace })).items.map((c) => c.metadata?.name);
  assert.ok((await claims()).includes('api-devtool'), 'down keeps the claim');
  const destroy = runDevtool(['destroy', '-n', s.namespace, '--wait'], { env, cwd, timeoutMs: 180_000 });
  assert.equal(destroy.code, 0, destroy.stderr);
  assert.match(destroy.stderr, /! kept 1 volume\(s\): api-devtool; 'devtool destroy --volumes' deletes them/);
  const volumes = runDevtool(['destroy', '-n', s.namespace, '--volumes', '--wait'], { env, cwd, timeoutMs: 180_000 });
  assert.equal(volumes.code, 0, volumes.stderr);
  assert.match(volumes.stderr, /deleted PersistentVolumeClaim\/api-devtool/);
  assert.ok(!(await claims()).includes('api-devtool'), `destroy --volumes deletes the dev container's claim: ${volumes.stderr}`);
});
