/**
 * `init` then `deploy`, as a new user would: init in a real pseudo-terminal on a folder holding a
 * Dockerfile and a Kubernetes manifest, its guesses accepted at each prompt; then `devtool deploy`
 * of the manifest it wrote, on the local cluster with the local Docker daemon: the image is built
 * and pushed, the guessed deploy command applies the manifest, the objects carry the environment.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ensureDocker } from '../../cluster/test-docker.ts';
import { runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, type ClusterSandbox } from './cluster.ts';
import { KEY, runInPty } from './pty.ts';

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
