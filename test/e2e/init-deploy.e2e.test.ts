/**
 * `init` then `deploy`, as a new user would: init in a real pseudo-terminal on a folder holding a
 * Dockerfile and a Kubernetes manifest, its guesses accepted at each prompt; then `devtool deploy`
 * of the manifest it wrote, on the local cluster with the local Docker daemon: the image is built
 * and pushed, the guessed deploy command applies the manifest, the objects carry the environment.
 * A project whose manifests name the image its Dockerfile makes (as pushed by hand, `:dev`) deploys
 * the image init's build pushes, even over a hand-applied Deployment stuck pulling `:dev`; and a
 * build that pushes the very reference such a pod failed to pull lets deploy --wait see it run.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ensureDocker } from '../../cluster/test-docker.ts';
import { runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, type ClusterSandbox } from './cluster.ts';
import { KEY, runInPty } from './pty.ts';
import { waitFor } from './wait.ts';

let s: ClusterSandbox;
let dockerHost: string;
let work: string;
let app: string;

before(async () => {
  [{ dockerHost }, s] = await Promise.all([ensureDocker(), clusterSandbox('e2e-init')]);
  work = mkdtempSync(join(tmpdir(), 'devtool-init-deploy-'));
  app = join(work, `hello-${Date.now().toString(36)}`);
  cpSync(join(import.meta.dirname, 'fixtures', 'init-app'), app, { recursive: true });
  const use = runDevtool(['context', 'use', 'devtool-local', '--namespace', s.namespace, '--registry', 'localhost:5000'], { env: s.env });
  assert.equal(use.code, 0, use.stderr);
});
after(async () => {
  if (s) await deleteNamespace(s);
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the manifest init writes from typed answers deploys: image built and pushed, manifest applied', { timeout: 300_000 }, async () => {
  const pty = runInPty(['init'], { cwd: app, env: s.env });
  await pty.waitFor('How is this application deployed?');
  await pty.waitFor('kubectl apply -f k8s');
  pty.type(KEY.enter);
  await pty.waitFor('Which service do you want to develop?');
  pty.type(KEY.enter);
  await pty.waitFor('Which port');
  pty.type(KEY.enter);
  assert.equal(await pty.exit(), 0, pty.output());
  const manifest = readFileSync(join(app, 'devtool.yml'), 'utf8');
  assert.match(manifest, /kubectl apply -f k8s/);

  const r = runDevtool(['deploy', '--wait'], { cwd: app, env: { ...s.env, DOCKER_HOST: dockerHost }, timeoutMs: 280_000 });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(
    r.stderr,
    new RegExp(`✓ image \\S+ built and pushed in [^:]+: localhost:5000/${basename(app)}-\\S+:devtool-[0-9a-f]{24}`),
    'the image was built and pushed under its content tag',
  );
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const hello = await apps.readNamespacedDeployment({ name: 'hello', namespace: s.namespace });
  assert.equal(hello.metadata?.labels?.['devtool.dev/environment'], basename(app));
  assert.equal(hello.status?.readyReplicas, 1, '--wait waited for it');
  const record = await s.core.readNamespacedConfigMap({ name: `devtool-env-${basename(app)}`, namespace: s.namespace });
  assert.equal(record.data?.['status'], 'deployed');
});

/** Applies `dir` of `project` as a user does by hand, then waits until its pod `app=<app>` reports a pull error. */
async function appliedByHand(project: string, dir: string, app: string): Promise<void> {
  execFileSync('kubectl', ['--kubeconfig', s.kubeconfig, '-n', s.namespace, 'apply', '-f', dir], { cwd: project, encoding: 'utf8' });
  await waitFor(
    `the hand-applied pod of ${app} reports its image pull error`,
    async () => {
      const pods = await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: `app=${app}` });
      return /ErrImagePull|ImagePullBackOff/.test(pods.items[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? '');
    },
    60_000,
  );
}

test('init over manifests naming the image a Dockerfile builds: deploy --wait runs the built image, past a stale pull error', {
  timeout: 300_000,
}, async () => {
  const project = join(work, `kapp-${Date.now().toString(36)}`);
  cpSync(join(import.meta.dirname, 'fixtures', 'init-built-image'), project, { recursive: true });
  const handPushed = await fetch('http://127.0.0.1:5000/v2/initweb/manifests/dev', { method: 'HEAD' });
  assert.equal(handPushed.status, 404, 'the reference the manifests name is not in the registry');
  // Deployed by hand before devtool: its pod cannot pull localhost:5000/initweb:dev.
  await appliedByHand(project, 'k8s', 'initweb');

  const init = runDevtool(['init', '-v1'], { cwd: project, env: s.env });
  assert.equal(init.code, 0, init.stderr);
  const manifest = readFileSync(join(project, 'devtool.yml'), 'utf8');
  assert.match(manifest, /sed -e "s\|localhost:5000\/initweb:dev\|\$DEVTOOL_BUILD_INITWEB_IMAGE\|g" k8s\/web\.yaml \| kubectl apply -f -/, manifest);
  assert.match(manifest, /kubectl apply -f k8s\/config\.yaml/, manifest);

  const r = runDevtool(['deploy', '--wait'], { cwd: project, env: { ...s.env, DOCKER_HOST: dockerHost }, timeoutMs: 280_000 });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  const built = new RegExp(`✓ image initweb built and pushed in [^:]+: (localhost:5000/${basename(project)}-initweb:devtool-[0-9a-f]{24})`).exec(r.stderr);
  assert.ok(built, r.stderr);
  assert.match(r.stderr, /✓ Deployment\/initweb ready/);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const web = await apps.readNamespacedDeployment({ name: 'initweb', namespace: s.namespace });
  assert.equal(web.spec?.template.spec?.containers[0]?.image, built[1], 'the Deployment runs the image the deploy pushed');
  assert.equal(web.status?.readyReplicas, 1);
  assert.match(r.stderr, /\] configmap\/initweb-settings (unchanged|configured)/, "the folder's other files are applied too");
});

test('deploy --wait past a pod that failed to pull the image reference this deploy then pushed', { timeout: 300_000 }, async () => {
  const id = Date.now().toString(36);
  const project = join(work, `stale-${id}`);
  const ref = `localhost:5000/stale-${id}:dev`;
  cpSync(join(import.meta.dirname, 'fixtures', 'init-built-image', 'initweb'), join(project, 'web'), { recursive: true });
  mkdirSync(join(project, 'k8s'));
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'stale' },
    spec: {
      selector: { matchLabels: { app: 'stale' } },
      template: { metadata: { labels: { app: 'stale' } }, spec: { containers: [{ name: 'web', image: ref }] } },
    },
  };
  writeFileSync(join(project, 'k8s', 'stale.yaml'), JSON.stringify(deployment));
  // A first deploy, before the manifest built anything: its pod cannot pull the image reference.
  writeFileSync(join(project, 'devtool.yml'), 'deploy:\n  - kubectl apply -f k8s\n');
  const first = runDevtool(['deploy'], { cwd: project, env: s.env });
  assert.equal(first.code, 0, first.stderr);
  await waitFor(
    'the pod reports its image pull error',
    async () => {
      const pods = await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: 'app=stale' });
      return /ErrImagePull|ImagePullBackOff/.test(pods.items[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? '');
    },
    60_000,
  );
  // The user's fix: build the image the manifests name.
  writeFileSync(join(project, 'devtool.yml'), `build:\n  web:\n    context: web\n    image: ${ref}\ndeploy:\n  - kubectl apply -f k8s\n`);

  const r = runDevtool(['deploy', '--wait'], { cwd: project, env: { ...s.env, DOCKER_HOST: dockerHost }, timeoutMs: 280_000 });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, new RegExp(`✓ image web built and pushed in [^:]+: \\S+, ${ref.replace(/[.]/g, '\\.')}`));
  assert.match(r.stderr, new RegExp(`Deployment/stale: pod stale-\\S+ could not pull ${ref.replace(/[.]/g, '\\.')} before this deploy pushed it`));
  assert.match(r.stderr, /✓ Deployment\/stale ready/);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  assert.equal((await apps.readNamespacedDeployment({ name: 'stale', namespace: s.namespace })).status?.readyReplicas, 1);
});
