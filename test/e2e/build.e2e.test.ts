/**
 * Builds, end to end: the built CLI, the local cluster and a real Docker daemon (Debian's
 * docker.io, started by cluster/dockerd.sh). `deploy` builds the sample application's image,
 * pushes it to localhost:5000 and its deploy command runs it on the cluster; a second deploy with
 * nothing changed (a new git commit of the same files included) skips the build; `build` and `build -f` build and push; a missing Dockerfile, a
 * failing RUN and an unreachable daemon are clear one-line errors that leave the state `error`;
 * `destroy` leaves nothing of the environment.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ensureDocker } from '../../cluster/test-docker.ts';
import { lines, runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, execInPod, runningPod, type ClusterSandbox } from './cluster.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'build-app');
const LABEL = 'devtool.dev/environment';
const GREETING = 'hello from the build test';
let s: ClusterSandbox;
let dockerHost: string;
let work: string;
/** The application folder: a fresh copy, so the environment and its images are new each run. */
let app: string;
let env: string;
let runId: string;

before(async () => {
  [{ dockerHost }, s] = await Promise.all([ensureDocker(), clusterSandbox('e2e-build')]);
  work = mkdtempSync(join(tmpdir(), 'devtool-build-'));
  runId = Date.now().toString(36);
  app = join(work, `app-${runId}`);
  cpSync(fixture, app, { recursive: true });
  // New content every run: otherwise a previous run's push would make the first deploy a skip.
  writeFileSync(join(app, 'run-id'), `${runId}\n`);
  writeFileSync(join(app, 'token.txt'), 'open sesame');
  // A git checkout, as a user's project is: its .git changes with every commit.
  git('init', '--quiet');
  git('add', '--all');
  git('commit', '--quiet', '--message', 'first');
  env = basename(app);
  const use = devtool(['context', 'use', 'devtool-local', '--registry', 'localhost:5000']);
  assert.equal(use.code, 0, use.stderr);
});
after(async () => {
  if (s) await deleteNamespace(s);
  if (work) rmSync(work, { recursive: true, force: true });
});

function devtool(args: string[], extraEnv: NodeJS.ProcessEnv = {}, timeoutMs = 300_000) {
  return runDevtool(args, { cwd: app, timeoutMs, env: { ...s.env, DOCKER_HOST: dockerHost, GREETING, ...extraEnv } });
}

function git(...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@devtool.test', ...args], { cwd: app, stdio: 'pipe' });
}

const lastLine = (text: string) => text.trim().split('\n').pop() ?? '';

/** The digest the local registry serves for a reference, or undefined when it has no such tag. */
async function registryDigest(ref: string): Promise<string | undefined> {
  const m = /^localhost:5000\/(.+):([^:]+)$/.exec(ref);
  assert.ok(m, `a reference in the local registry: ${ref}`);
  const res = await fetch(`http://127.0.0.1:5000/v2/${m[1]}/manifests/${m[2]}`, {
    method: 'HEAD',
    headers: { Accept: 'application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json' },
  });
  return res.status === 200 ? (res.headers.get('docker-content-digest') ?? undefined) : undefined;
}

async function state(name: string): Promise<Record<string, string>> {
  return (await s.core.readNamespacedConfigMap({ name: `devtool-env-${name}`, namespace: s.namespace })).data ?? {};
}

let builtRef: string;
let builtDigest: string | undefined;

test('deploy builds the image with the Docker daemon, pushes it, and the pod runs it', { timeout: 300_000 }, async () => {
  const r = devtool(['deploy', '--namespace', s.namespace, '--wait']);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  const m = new RegExp(`• building image app with docker: (localhost:5000/${env}-app:devtool-[0-9a-f]{24})`).exec(r.stderr);
  assert.ok(m, `the build step names the image and its content tag:\n${r.stderr}`);
  builtRef = m[1]!;
  assert.match(r.stderr, /\[build app\] #\d+ \[3\/3\] RUN echo "hello from the build test" > \/srv\/greeting/, 'build output is streamed');
  assert.match(r.stderr, new RegExp(`✓ image app built and pushed in [^:]+: ${builtRef.replace(/[.]/g, '\\.')}`));
  assert.match(r.stderr, /✓ Deployment\/built ready/);
  builtDigest = await registryDigest(builtRef);
  assert.match(builtDigest ?? '', /^sha256:[0-9a-f]{64}$/, 'the tag is in the local registry');

  const pod = await runningPod(s.core, s.namespace, 'app=built');
  const spec = await s.core.readNamespacedPod({ name: pod, namespace: s.namespace });
  assert.equal(spec.spec?.containers[0]?.image, builtRef, 'the deploy command got $DEVTOOL_BUILD_APP_IMAGE');
  const files = await execInPod(s.kc, s.namespace, pod, ['cat', '/srv/message.txt', '/srv/run-id', '/srv/greeting']);
  assert.equal(files.code, 0, files.stderr);
  assert.equal(files.stdout, `built by devtool\n${runId}\n${GREETING}\n`, 'the pod runs the image built from this folder, with its build argument');
  const st = await state(env);
  assert.equal(st['status'], 'deployed');
});

test('a second deploy with nothing changed (ignored files and a new commit aside) skips the build', { timeout: 300_000 }, async () => {
  assert.ok(builtRef, 'the first deploy ran');
  // Files .dockerignore excludes are not part of the image: changing them changes nothing.
  writeFileSync(join(app, 'ignored', 'notes.txt'), 'edited');
  writeFileSync(join(app, 'debug.log'), 'new');
  // Nor does git's own state: a commit of the same tree (the fixture's .dockerignore leaves .git in).
  git('commit', '--quiet', '--allow-empty', '--message', 'second');
  const r = devtool(['deploy', '--namespace', s.namespace]);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  assert.match(r.stderr, new RegExp(`✓ image app is up to date: ${builtRef.replace(/[.]/g, '\\.')} is in the registry, build skipped`));
  assert.doesNotMatch(r.stderr, /building image/);
  assert.match(r.stderr, /\[apply\] deployment\.apps\/built unchanged/);
  assert.equal(await registryDigest(builtRef), builtDigest, 'the registry tag is unchanged');
});

test('deploy --build builds again even when the image is in the registry', { timeout: 300_000 }, () => {
  const r = devtool(['deploy', '--namespace', s.namespace, '--build']);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  assert.match(r.stderr, new RegExp(`• building image app with docker: ${builtRef.replace(/[.]/g, '\\.')}`), 'same content, same tag');
});

test('`build` builds and pushes the manifest images and prints their references', { timeout: 300_000 }, async () => {
  const r = devtool(['build']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout), [builtRef], 'the same content gives the same reference as the deploy');
  assert.match(r.stderr, /• building image app with docker/);
  const compose = devtool(['build', '-f', 'compose.yaml']);
  assert.equal(compose.code, 0, compose.stderr);
  assert.match(compose.stdout, new RegExp(`^localhost:5000/${env}-web:devtool-[0-9a-f]{24}\n$`), 'a Compose file: its services with a build');
});

test('`build -f Dockerfile` builds that Dockerfile into <registry>/<folder>:<content tag>', { timeout: 300_000 }, async () => {
  const r = devtool(['build', '-f', 'Dockerfile']);
  assert.equal(r.code, 0, r.stderr);
  const [ref] = lines(r.stdout);
  assert.match(ref ?? '', new RegExp(`^localhost:5000/${env}:devtool-[0-9a-f]{24}$`));
  assert.ok(await registryDigest(ref!), `${ref} is in the registry`);
});

test('build secrets reach RUN --mount=type=secret through the BuildKit session', { timeout: 300_000 }, async () => {
  const r = devtool(['build', '-f', 'Dockerfile.secret', '--secret', 'id=token,src=token.txt']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /#\d+ secret ok/);
  // BuildKit caches a RUN step whatever its secrets hold: --no-cache makes it run again.
  const missing = devtool(['build', '-f', 'Dockerfile.secret', '--no-cache']);
  assert.equal(missing.code, 1, `without the secret, the RUN fails:\n${missing.stderr}`);
  assert.match(lastLine(missing.stderr), /step "\[3\/3\] RUN --mount=type=secret,id=token .*" \(Dockerfile\.secret:3\) exited with code 1$/);
});

test('Compose services with a build are built when missing, and run the built image', { timeout: 300_000 }, async () => {
  const name = `compose-${runId}`;
  const r = devtool(['deploy', '-f', 'compose.yaml', '--name', name, '--namespace', s.namespace, '--wait']);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  const m = new RegExp(`• building image web with docker: (localhost:5000/${name}-web:devtool-[0-9a-f]{24})`).exec(r.stderr);
  assert.ok(m, r.stderr);
  const pod = await runningPod(s.core, s.namespace, `${LABEL}=${name}`);
  assert.equal((await s.core.readNamespacedPod({ name: pod, namespace: s.namespace })).spec?.containers[0]?.image, m[1]);
  const files = await execInPod(s.kc, s.namespace, pod, ['cat', '/srv/run-id']);
  assert.equal(files.stdout, `${runId}\n`);
  const again = devtool(['deploy', '-f', 'compose.yaml', '--name', name, '--namespace', s.namespace]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /✓ image web is up to date: .* build skipped/);
  assert.doesNotMatch(again.stderr, /building image/);
  const destroyed = devtool(['destroy', '--name', name, '--namespace', s.namespace, '--wait']);
  assert.equal(destroyed.code, 0, destroyed.stderr);
});

test('a missing Dockerfile: a located error, nothing run, the state says error', { timeout: 120_000 }, async () => {
  const r = devtool(['deploy', '-f', 'devtool-missing.yml', '--name', `missing-${runId}`, '--namespace', s.namespace]);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(lastLine(r.stderr), 'Error: devtool-missing.yml:4:17: field build.app.dockerfile: Dockerfile nope/Dockerfile not found');
  assert.doesNotMatch(r.stderr, /running never/);
  const st = await state(`missing-${runId}`);
  assert.equal(st['status'], 'error');
  assert.match(st['error'] ?? '', /nope\/Dockerfile not found/);
});

test('a failing RUN: its output, then one line naming the image, the step and the exit code; state error', { timeout: 300_000 }, async () => {
  const r = devtool(['deploy', '-f', 'devtool-fail.yml', '--name', `failing-${runId}`, '--namespace', s.namespace]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /\[build app\] #\d+ about to fail/, 'the log tail is shown');
  assert.match(
    lastLine(r.stderr),
    new RegExp(
      `^Error: building localhost:5000/failing-${runId}-app:devtool-[0-9a-f]{24} failed: step "\\[3/3\\] RUN echo about to fail && exit 3" ` +
        `\\(Dockerfile\\.fail:3\\) exited with code 3$`,
    ),
  );
  assert.doesNotMatch(r.stderr, /running never/);
  const st = await state(`failing-${runId}`);
  assert.equal(st['status'], 'error');
  assert.match(st['error'] ?? '', /exited with code 3/);
});

test('an unreachable Docker daemon: one line naming it, for deploy (state error) and build', { timeout: 120_000 }, async () => {
  const r = devtool(['deploy', '--build', '--name', `unreachable-${runId}`, '--namespace', s.namespace], { DOCKER_HOST: 'unix:///nonexistent' });
  assert.equal(r.code, 1, r.stderr);
  assert.match(lastLine(r.stderr), /^Error: cannot reach the Docker daemon at unix:\/\/\/nonexistent \(no such socket\): start Docker or set DOCKER_HOST/);
  assert.equal((await state(`unreachable-${runId}`))['status'], 'error');
  const b = devtool(['build'], { DOCKER_HOST: 'unix:///nonexistent' }, 60_000);
  assert.equal(b.code, 1, b.stderr);
  assert.match(lastLine(b.stderr), /cannot reach the Docker daemon at unix:\/\/\/nonexistent/);
  assert.equal(b.stdout, '');
});

test('destroy leaves no object of the environment', { timeout: 300_000 }, async () => {
  const r = devtool(['destroy', '--namespace', s.namespace, '--wait']);
  assert.equal(r.code, 0, `destroy failed:\n${r.stderr}`);
  const selector = `${LABEL}=${env}`;
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const left = [
    ...(await apps.listNamespacedDeployment({ namespace: s.namespace, labelSelector: selector })).items,
    ...(await apps.listNamespacedReplicaSet({ namespace: s.namespace, labelSelector: selector })).items,
    ...(await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: selector })).items.filter((p) => !p.metadata?.deletionTimestamp),
  ].map((o) => o.metadata?.name);
  assert.deepEqual(left, []);
  await assert.rejects(state(env), 'the state record is gone');
});
