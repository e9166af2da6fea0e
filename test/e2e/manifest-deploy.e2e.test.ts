/**
 * Manifest deploys end to end: a manifest whose deploy commands are plain kubectl (client-side apply of a
 * folder, a server-side apply, `kubectl create deployment` and `kubectl create secret`, which send
 * protobuf) and a shell command making an "external resource" (a file), depending on a repository
 * that the test makes with `git init` in a temporary folder and that devtool clones from that local
 * path. Everything the commands create carries the environment label (the labelling proxy); --wait
 * waits for the workloads they created; the dependency is deployed once (again with
 * --dependencies); a failing command, an uncloneable dependency, a dependency cycle and a workload
 * that cannot start each fail clearly and record `error`; destroy runs the destroy command (the file
 * goes) and leaves no object of the environment, while the dependency stays.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, type ClusterSandbox } from './cluster.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'manifest-app');
const ENV = 'manifest-app';
const LABEL = 'devtool.dev/environment';
let s: ClusterSandbox;
let external: string;
let work: string;
let backendRepo: string;

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'e2e',
  GIT_AUTHOR_EMAIL: 'e2e@example.com',
  GIT_COMMITTER_NAME: 'e2e',
  GIT_COMMITTER_EMAIL: 'e2e@example.com',
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });

/** A git repository in the temporary folder, with `files` (a fixture folder, or name -> text) committed. */
function gitRepository(name: string, files: string | Record<string, string>): string {
  const dir = join(work, name);
  if (typeof files === 'string') cpSync(files, dir, { recursive: true });
  else {
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

before(async () => {
  s = await clusterSandbox('e2e-manifest');
  external = mkdtempSync(join(tmpdir(), 'devtool-external-'));
  work = mkdtempSync(join(tmpdir(), 'devtool-repos-'));
  backendRepo = gitRepository('backend', join(import.meta.dirname, 'fixtures', 'manifest-dependency'));
});
after(async () => {
  if (s) await deleteNamespace(s);
  if (external) rmSync(external, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

function devtool(args: string[], opts: { timeoutMs?: number; cwd?: string } = {}) {
  return runDevtool(args, {
    cwd: opts.cwd ?? fixture,
    timeoutMs: opts.timeoutMs ?? 240_000,
    env: { ...s.env, APP_TOKEN: 's3cret', BACKEND_REPO: backendRepo },
  });
}

async function labelled(env: string): Promise<string[]> {
  const selector = `${LABEL}=${env}`;
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const batch = s.kc.makeApiClient(k8s.BatchV1Api);
  const ns = s.namespace;
  const names = (kind: string, items: { metadata?: { name?: string } }[]) => items.map((i) => `${kind}/${i.metadata?.name}`);
  return [
    ...names('Deployment', (await apps.listNamespacedDeployment({ namespace: ns, labelSelector: selector })).items),
    ...names('Service', (await s.core.listNamespacedService({ namespace: ns, labelSelector: selector })).items),
    ...names('ConfigMap', (await s.core.listNamespacedConfigMap({ namespace: ns, labelSelector: selector })).items),
    ...names('Secret', (await s.core.listNamespacedSecret({ namespace: ns, labelSelector: selector })).items),
    ...names('Job', (await batch.listNamespacedJob({ namespace: ns, labelSelector: selector })).items),
  ].sort();
}

/** Every object of every namespaced kind the cluster serves that carries the environment label. */
function everyLabelled(env: string): string[] {
  const kc = s.cluster.kubeconfigPath;
  const kinds = execFileSync('kubectl', ['--kubeconfig', kc, 'api-resources', '--namespaced', '--verbs=list', '-o', 'name'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .filter((k) => !k.startsWith('events'));
  const out = execFileSync(
    'kubectl',
    ['--kubeconfig', kc, 'get', kinds.join(','), '-n', s.namespace, '-l', `${LABEL}=${env}`, '-o', 'name', '--ignore-not-found'],
    { encoding: 'utf8' },
  );
  return out.trim().split('\n').filter(Boolean);
}

async function state(env: string): Promise<Record<string, string>> {
  return (await s.core.readNamespacedConfigMap({ name: `devtool-env-${env}`, namespace: s.namespace })).data ?? {};
}

async function configValue(name: string, key: string): Promise<string | undefined> {
  return (await s.core.readNamespacedConfigMap({ name, namespace: s.namespace })).data?.[key];
}

test('deploy: the dependency first (cloned from a local git path), then the commands through the labelling proxy; --wait', { timeout: 400_000 }, async () => {
  const r = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--var', `EXTERNAL_DIR=${external}`, '--wait']);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  // The dependency: cloned, deployed as its own environment with its variables, awaited (wait: true).
  assert.match(r.stderr, /• dependency backend: cloning \/.*\/backend\n/);
  assert.match(r.stderr, /\[backend\] \[config\] configmap\/backend-config created/);
  assert.match(r.stderr, /\[backend\] ✓ Deployment\/backend-api ready/);
  assert.match(r.stderr, /✓ dependency backend deployed/);
  assert.ok(r.stderr.indexOf('dependency backend deployed') < r.stderr.indexOf('running apply'), 'dependencies come first');
  assert.equal((await state('backend'))['status'], 'deployed');
  assert.equal(await configValue('backend-config', 'greeting'), 'hello from the dependent');
  assert.deepEqual(await labelled('backend'), ['ConfigMap/backend-config', 'Deployment/backend-api']);

  assert.match(r.stderr, /\[apply\] deployment\.apps\/web created/);
  assert.match(r.stderr, /\[secret\] secret\/app-token created/);
  assert.match(r.stderr, /\[server-side\] job\.batch\/migrate serverside-applied/);
  for (const w of ['Deployment/web ready', 'Deployment/worker ready', 'Job/migrate completed'])
    assert.match(r.stderr, new RegExp(`✓ ${w}`), '--wait waited for every workload the commands created');
  assert.doesNotMatch(r.stderr, /could not label/);
  assert.match(r.stderr, /✓ environment manifest-app deployed/);
  assert.equal(readFileSync(join(external, 'resource'), 'utf8'), `${ENV} in ${s.namespace}\n`, 'the documented variables reach the commands');

  const objects = await labelled(ENV);
  for (const o of ['Deployment/web', 'Service/web', 'ConfigMap/web-config', 'ConfigMap/server-side-config', 'Job/migrate'])
    assert.ok(objects.includes(o), `${o} carries the label; labelled: ${objects.join(', ')}`);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const web = await apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace });
  assert.equal(web.spec?.template.metadata?.labels?.[LABEL], ENV, 'pod templates are labelled too');
  assert.equal(web.metadata?.labels?.['app'], 'web', 'labels of the manifest are kept');
  const job = await s.kc.makeApiClient(k8s.BatchV1Api).readNamespacedJob({ name: 'migrate', namespace: s.namespace });
  assert.equal(job.spec?.template.metadata?.labels?.[LABEL], ENV, 'server-side apply: pod template labelled');

  const st = await state(ENV);
  assert.equal(st['status'], 'deployed');
  assert.equal(st['source'], 'manifest');
  assert.match(st['manifest'] ?? '', /kubectl apply -f k8s\//);
  // The --var values are in a Secret beside the record (they may be passwords); the record names them.
  assert.equal(st['variables'], undefined);
  assert.equal(st['variableNames'], 'EXTERNAL_DIR');
  const vars = await s.core.readNamespacedSecret({ name: `devtool-env-${ENV}-vars`, namespace: s.namespace });
  assert.deepEqual(JSON.parse(Buffer.from(vars.data?.variables ?? '', 'base64').toString('utf8')), { EXTERNAL_DIR: external });
  assert.match(st['output'] ?? '', /\[apply\] service\/web created/);
});

test('objects made by `kubectl create` (protobuf bodies) carry the label, pod templates too', async () => {
  const objects = await labelled(ENV);
  assert.ok(objects.includes('Secret/app-token'), `labelled: ${objects.join(', ')}`);
  assert.ok(objects.includes('Deployment/worker'), `labelled: ${objects.join(', ')}`);
  const worker = await s.kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name: 'worker', namespace: s.namespace });
  assert.equal(worker.spec?.template.metadata?.labels?.[LABEL], ENV);
  assert.equal(worker.spec?.template.metadata?.labels?.['app'], 'worker', "kubectl's own labels kept");
  const pods = await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: `${LABEL}=${ENV},app=worker` });
  assert.ok(pods.items.length > 0, 'its pods carry the label');
});

test('a second deploy leaves a deployed dependency alone; --dependencies deploys it again, updated', { timeout: 400_000 }, async () => {
  const before = (await state('backend'))['updated'];
  const r = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--var', `EXTERNAL_DIR=${external}`]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /✓ dependency backend is already deployed \(environment backend; --dependencies redeploys it\)/);
  assert.doesNotMatch(r.stderr, /\[backend\]/);
  assert.equal((await state('backend'))['updated'], before, 'the dependency was not deployed again');

  // A new commit in the dependency's repository: --dependencies fetches it and deploys it.
  const manifest = join(backendRepo, 'devtool.yml');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('version=1', 'version=2'));
  git(backendRepo, 'commit', '-q', '-am', 'version 2');
  const again = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--var', `EXTERNAL_DIR=${external}`, '--dependencies']);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /• dependency backend: updating \/.*\/backend\n/);
  assert.match(again.stderr, /✓ dependency backend deployed/);
  assert.equal(await configValue('backend-config', 'version'), '2');
  assert.notEqual((await state('backend'))['updated'], before);
});

test('a dependency that cannot be cloned: one line naming it and git reason, nothing run, state error', { timeout: 120_000 }, async () => {
  const r = devtool(['deploy', '--file', 'devtool-bad-dependency.yml', '--name', 'bad-dep', '--namespace', s.namespace]);
  assert.equal(r.code, 1, r.stderr);
  const last = r.stderr.trim().split('\n').pop()!;
  assert.match(last, /^Error: dependency "missing": cannot clone \.\/no-such-repository: '\/.*\/no-such-repository' does not appear to be a git repository$/);
  assert.doesNotMatch(r.stderr, /running never/);
  const st = await state('bad-dep');
  assert.equal(st['status'], 'error');
  assert.match(st['error'] ?? '', /cannot clone/);
});

test('a dependency cycle is an error naming the cycle', { timeout: 120_000 }, async () => {
  const a = join(work, 'cyc-a');
  const b = gitRepository('cyc-b', { 'devtool.yml': `dependencies:\n  cyc-a:\n    repository: ${a}\ndeploy: [echo b]\n` });
  gitRepository('cyc-a', { 'devtool.yml': `dependencies:\n  cyc-b:\n    repository: ${b}\ndeploy: [echo a]\n` });
  const r = devtool(['deploy', '--namespace', s.namespace], { cwd: a, timeoutMs: 120_000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr.trim().split('\n').pop()!, /^Error: dependency cycle: cyc-a -> cyc-b -> cyc-a \(.*\/devtool\.yml\); remove one of these dependencies$/);
  assert.doesNotMatch(r.stderr, /running echo/);
  assert.equal((await state('cyc-a'))['status'], 'error');
});

test('deploy --wait names a workload of the commands that cannot start', { timeout: 200_000 }, async () => {
  const r = devtool(['deploy', '--file', 'devtool-wait-fail.yml', '--name', 'wait-fail', '--namespace', s.namespace, '--wait', '--timeout', '2m']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /✗ Deployment\/broken failed: image pull error for localhost:5000\/no-such-image:1/);
  assert.match(r.stderr.trim().split('\n').pop()!, /^Error: Deployment\/broken failed: image pull error/);
  assert.equal((await state('wait-fail'))['status'], 'error');
});

test('a failing command stops the deploy with its exit code, and the state says error', { timeout: 120_000 }, async () => {
  const r = devtool(['deploy', '--file', 'devtool-fail.yml', '--name', 'failing', '--namespace', s.namespace]);
  assert.equal(r.code, 1, r.stderr);
  const last = r.stderr.trim().split('\n').pop()!;
  assert.match(last, /deploy command "broken" failed with exit code 7/);
  assert.match(r.stderr, /\[broken\] about to fail/);
  assert.doesNotMatch(r.stderr, /running never/);
  const st = await state('failing');
  assert.equal(st['status'], 'error');
  assert.match(st['error'] ?? '', /exit code 7/);
  assert.deepEqual(await labelled('failing'), ['ConfigMap/fail-first']);
});

test('destroy runs the destroy commands, then removes every object of the environment; the dependency stays', { timeout: 300_000 }, async () => {
  assert.ok(existsSync(join(external, 'resource')));
  assert.ok(everyLabelled(ENV).length >= 10, `objects before destroy: ${everyLabelled(ENV).join(', ')}`);
  const r = devtool(['destroy', '--name', ENV, '--namespace', s.namespace, '--wait']);
  assert.equal(r.code, 0, `destroy failed:\n${r.stderr}`);
  assert.match(r.stderr, /✓ remove external/);
  assert.ok(!existsSync(join(external, 'resource')), 'the destroy command removed the external resource (with the variables of the deploy)');
  // Endpoints and EndpointSlices copy the Service's labels; their controllers remove them right after it.
  for (let i = 0; i < 30 && everyLabelled(ENV).length > 0; i++) await new Promise((r) => setTimeout(r, 1000));
  assert.deepEqual(everyLabelled(ENV), [], 'zero objects of the environment, of any kind');
  await assert.rejects(state(ENV), 'the state record is gone');
  // By name too: an object that escaped the label (a protobuf create) would not show above.
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const gone = async (read: () => Promise<unknown>) =>
    read().then(
      () => false,
      (err: { code?: number }) => err.code === 404,
    );
  for (const [what, read] of [
    ['Secret/app-token', () => s.core.readNamespacedSecret({ name: 'app-token', namespace: s.namespace })],
    ['Deployment/worker', () => apps.readNamespacedDeployment({ name: 'worker', namespace: s.namespace })],
    ['Deployment/web', () => apps.readNamespacedDeployment({ name: 'web', namespace: s.namespace })],
    ['ConfigMap/server-side-config', () => s.core.readNamespacedConfigMap({ name: 'server-side-config', namespace: s.namespace })],
  ] as const) {
    assert.ok(await gone(read), `${what} is gone`);
  }
  assert.match(r.stderr, /dependencies are not destroyed: backend/);
  assert.equal((await state('backend'))['status'], 'deployed');
  assert.deepEqual(await labelled('backend'), ['ConfigMap/backend-config', 'Deployment/backend-api']);
});

test('destroy --file: the destroy commands of the manifest named; a file that is not there is one line, nothing destroyed', { timeout: 180_000 }, async () => {
  const dir = join(work, 'file-app');
  mkdirSync(join(dir, 'deploy'), { recursive: true });
  const marker = join(external, 'file-app-resource');
  writeFileSync(
    join(dir, 'deploy', 'preview.yml'),
    ['deploy:', '  - kubectl create configmap file-app-made --from-literal=a=b', `  - touch "${marker}"`, 'destroy:', `  - rm "${marker}"`, ''].join('\n'),
  );
  const ns = ['--name', 'file-app', '--namespace', s.namespace];
  const deployed = devtool(['deploy', '--file', 'deploy/preview.yml', ...ns], { cwd: dir });
  assert.equal(deployed.code, 0, deployed.stderr);
  assert.ok(existsSync(marker));

  const missing = devtool(['destroy', '--file', 'deploy/missing.yml', ...ns], { cwd: dir });
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'Error: deploy/missing.yml not found\n');
  assert.ok(existsSync(marker), 'nothing destroyed');
  assert.deepEqual(await labelled('file-app'), ['ConfigMap/file-app-made']);

  const r = devtool(['destroy', '-f', 'deploy/preview.yml', ...ns, '--wait'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!existsSync(marker), 'the destroy command of deploy/preview.yml ran');
  assert.deepEqual(await labelled('file-app'), []);
});
