/**
 * The first run from `init`, for the kinds of project with nothing to swap: a folder
 * with a Dockerfile only, and a folder with nothing but code. init writes `autocreate: true`; `up`
 * creates a standalone dev Deployment (`<name>-devtool`) running the image the manifest builds (or,
 * with no Dockerfile, the language's image as the context's registry holds it); a file saved here
 * reaches the container; a second `up` reuses the Deployment; `down` deletes it, and `down
 * --volumes` leaves nothing of dev mode in the namespace. No Service is ever created.
 */
import type * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { REGISTRY, type ClusterSandbox } from './cluster.ts';
import { assertSyncs, devLeftovers, down, firstRun, firstRunSandbox, writeProject } from './first-run.ts';
import { startUp, tearDownDev } from './up-session.ts';

let s: ClusterSandbox;
let env: NodeJS.ProcessEnv;
let apps: k8s.AppsV1Api;
const folders: string[] = [];

before(async () => {
  ({ s, env, apps } = await firstRunSandbox('first-run-a'));
});

after(() => tearDownDev(s, env, folders));

const server = "require('node:http').createServer((_, res) => res.end('hello\\n')).listen(18731);\n";

test('a Dockerfile only: init, deploy builds the image, up creates a standalone dev container running it, down deletes it', { timeout: 480_000 }, async () => {
  const cwd = join(s.root, 'myapp');
  folders.push(cwd);
  writeProject(cwd, {
    // New content each run: deploy builds and pushes, as on a first run.
    'package.json': `{"name": "myapp", "version": "1.0.0", "main": "server.js", "description": "run ${Date.now()}"}\n`,
    'server.js': server,
    Dockerfile: `FROM ${REGISTRY}/node:20\nWORKDIR /app\nCOPY . .\nEXPOSE 18731\nCMD ["node", "server.js"]\n`,
  });
  const run = await firstRun(cwd, env);
  const dev = run.manifest.services['myapp']!;
  assert.equal(dev.autocreate, true, run.init);
  assert.equal(dev.image, undefined, 'no public image: up runs the image the build section builds');
  assert.match(run.init, /next: devtool deploy, then devtool up/);
  const built = /image myapp built and pushed in [^:]+: (\S+)/.exec(run.outputs[0]!)?.[1];
  assert.ok(built, run.outputs[0]);
  assert.match(run.outputs[1]!, /no deployment myapp to swap in namespace \S+: creating the standalone dev deployment myapp-devtool \(autocreate\)/);
  assert.match(run.outputs[1]!, /image myapp is up to date/, 'up reuses the image deploy pushed');

  const d = await apps.readNamespacedDeployment({ name: 'myapp-devtool', namespace: s.namespace });
  const container = d.spec!.template.spec!.containers[0]!;
  assert.equal(container.image, built, "the dev container runs the manifest's built image");
  assert.equal(d.metadata?.annotations?.['devtool.dev/dev-autocreated'], 'true');
  await assertSyncs(cwd, env);
  await run.up.stop();

  // A second up reuses the standalone Deployment: the same object, nothing built again.
  const again = await startUp([], { env, cwd }, 240_000);
  assert.match(again.stdout(), /dev container myapp-devtool is ready/);
  assert.doesNotMatch(again.output(), /building image/);
  assert.equal((await apps.readNamespacedDeployment({ name: 'myapp-devtool', namespace: s.namespace })).metadata?.uid, d.metadata?.uid);
  await assertSyncs(cwd, env, 'second.txt');
  await again.stop();

  const out = down(cwd, env);
  assert.match(out, /standalone dev deployment myapp-devtool deleted/);
  assert.deepEqual(await devLeftovers(s, 'myapp'), ['pvc/myapp-devtool'], 'only the claim of the synced files, as after any down without --volumes');
  down(cwd, env, true);
  assert.deepEqual(await devLeftovers(s, 'myapp'), [], 'down --volumes leaves nothing of dev mode');
  const all = await apps.listNamespacedDeployment({ namespace: s.namespace });
  assert.deepEqual(
    all.items.map((x) => x.metadata?.name),
    [],
    'no Deployment at all: up created only the dev one',
  );
  assert.deepEqual((await s.core.listNamespacedService({ namespace: s.namespace })).items, [], 'no Service was created');
});

test('nothing but code (no Dockerfile, nothing to deploy): the dev container runs the registry copy of the language image', { timeout: 300_000 }, async () => {
  const cwd = join(s.root, 'bare');
  folders.push(cwd);
  writeProject(cwd, { 'package.json': '{"name": "bare", "version": "1.0.0"}\n', 'server.js': server });
  const run = await firstRun(cwd, env);
  const dev = run.manifest.services['bare']!;
  assert.equal(dev.autocreate, true);
  assert.equal(dev.image, `${REGISTRY}/node:20`, "node:20 as the context's registry holds it: the cluster pulls from there");
  assert.match(run.init, /next: devtool up$/m, 'nothing to build or deploy');
  assert.doesNotMatch(run.init, /public image/);
  const d = await apps.readNamespacedDeployment({ name: 'bare-devtool', namespace: s.namespace });
  assert.equal(d.spec!.template.spec!.containers[0]!.image, `${REGISTRY}/node:20`);
  await assertSyncs(cwd, env);
  await run.up.stop();

  // Another folder with the same dev container: its up and down leave this folder's standalone one alone, naming where it runs.
  const other = join(s.root, 'bare-clone');
  writeProject(other, { 'devtool.yml': readFileSync(join(cwd, 'devtool.yml'), 'utf8') });
  const refused = runDevtool(['up'], { cwd: other, env, timeoutMs: 60_000 });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, new RegExp(`bare is already in development from folder ${cwd} \\(deployment bare-devtool in namespace`));
  const notHere = runDevtool(['down'], { cwd: other, env, timeoutMs: 60_000 });
  assert.equal(notHere.code, 1);
  assert.match(notHere.stderr, new RegExp(`bare was activated from folder ${cwd}: run 'devtool down' there`));
  assert.ok(await apps.readNamespacedDeployment({ name: 'bare-devtool', namespace: s.namespace }), 'still there');

  // Nothing was deployed, yet destroy finds the dev container's claim, keeps it, and --volumes deletes it.
  down(cwd, env);
  const destroy = runDevtool(['destroy'], { cwd, env, timeoutMs: 120_000 });
  assert.equal(destroy.code, 0, destroy.stderr);
  assert.doesNotMatch(destroy.stderr, /nothing to destroy/);
  assert.match(destroy.stderr, /! kept 1 volume\(s\): bare-devtool; 'devtool destroy --volumes' deletes them/);
  const volumes = runDevtool(['destroy', '--volumes', '--wait'], { cwd, env, timeoutMs: 120_000 });
  assert.equal(volumes.code, 0, volumes.stderr);
  assert.deepEqual(await devLeftovers(s, 'bare'), [], `destroy --volumes leaves nothing of dev mode: ${volumes.stderr}`);
});

test('manifests that define no Deployment: deploy applies them, up creates the dev container without deploying again', { timeout: 300_000 }, async () => {
  const cwd = join(s.root, 'cfgapp');
  folders.push(cwd);
  writeProject(cwd, {
    Dockerfile: `FROM ${REGISTRY}/debian:bookworm\nCOPY . /srv/\nEXPOSE 18733\n`,
    'k8s/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: dev}\n',
  });
  const run = await firstRun(cwd, env);
  assert.deepEqual(
    run.manifest.deploy.commands.map((c) => c.command),
    ['kubectl apply -f k8s'],
  );
  assert.equal(run.manifest.services['cfgapp']!.autocreate, true, 'the manifests hold nothing to swap');
  assert.match(run.outputs[0]!, /configmap\/settings created/);
  assert.doesNotMatch(run.outputs[1]!, /deploying/, 'the environment is deployed: up does not deploy it again');
  assert.match(run.outputs[1]!, /creating the standalone dev deployment cfgapp-devtool/);
  await assertSyncs(cwd, env);
  await run.up.stop();
  down(cwd, env, true);
  assert.deepEqual(await devLeftovers(s, 'cfgapp'), []);
  assert.ok(await s.core.readNamespacedConfigMap({ name: 'settings', namespace: s.namespace }), 'what deploy made stays');
});
