/**
 * Host volumes at deploy time, end to end (the built CLI, the local cluster, the local
 * Docker daemon and registry): nginx whose server block comes from `./nginx.conf:...:ro` and whose
 * pages come from `./site` serves, through its Service, a page that only that configuration and
 * those files give; `.dockerignore` in the folder keeps a file out; the `:ro` file has no write
 * bits; `/etc/localtime` is named in a warning and not deployed; `./data`, missing, becomes a
 * claim whose data survives a pod restart; a service with a build gets its volume on top of the
 * built image; a second deploy with nothing changed reuses the pushed image, `--dry-run` shows
 * the same references, a changed page makes a new one; `--build` bakes again, on BuildKit too,
 * to the same reference; `./data` given content is baked, and emptied again is back on its claim
 * (an existing Deployment changing its update strategy).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuildkit } from '../../buildkit/test-buildkit.ts';
import { ensureDocker } from '../../cluster/test-docker.ts';
import { runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, execInPod, REGISTRY, runningPod, type ClusterSandbox } from './cluster.ts';
import { waitFor } from './wait.ts';

let s: ClusterSandbox;
let dockerHost: string;
let work: string;
let app: string;
let runId: string;
const ENV = 'hostvol';

before(async () => {
  [{ dockerHost }, s] = await Promise.all([ensureDocker(), clusterSandbox('e2e-hostvol')]);
  runId = Date.now().toString(36);
  work = mkdtempSync(join(tmpdir(), 'devtool-hostvol-'));
  app = join(work, 'app');
  mkdirSync(join(app, 'site'), { recursive: true });
  // A server block nginx's default configuration does not have: port 8080, a header, a location.
  writeFileSync(
    join(app, 'nginx.conf'),
    [
      'server {',
      '  listen 8080;',
      '  root /usr/share/nginx/html;',
      `  add_header X-Config from-host-${runId};`,
      `  location = /conf { return 200 "configured by ./nginx.conf ${runId}\\n"; }`,
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(join(app, 'site', 'index.html'), `<h1>site ${runId}</h1>\n`);
  writeFileSync(join(app, 'site', 'secret.txt'), 'not for the image\n');
  writeFileSync(join(app, 'site', '.dockerignore'), 'secret.txt\n');
  // A service with a build: its host volume is added to the image its build gives.
  mkdirSync(join(app, 'api'));
  mkdirSync(join(app, 'api-conf'));
  writeFileSync(join(app, 'api', 'Dockerfile'), `FROM ${REGISTRY}/debian:bookworm\nCOPY built.txt /built.txt\n`);
  writeFileSync(join(app, 'api', 'built.txt'), `built ${runId}\n`);
  writeFileSync(join(app, 'api-conf', 'app.conf'), `conf ${runId}\n`);
  writeFileSync(
    join(app, 'compose.yaml'),
    `services:
  web:
    image: ${REGISTRY}/nginx:1
    ports: ["8080"]
    volumes:
      - ./nginx.conf:/etc/nginx/conf.d/default.conf:ro
      - ./site:/usr/share/nginx/html
      - /etc/localtime:/etc/localtime:ro
  api:
    build: ./api
    command: [sleep, infinity]
    volumes: ["./api-conf:/etc/api:ro"]
  store:
    image: ${REGISTRY}/debian:bookworm
    command: [sleep, infinity]
    volumes:
      - ./data:/data
`,
  );
  const use = devtool(['context', 'use', 'devtool-local', '--registry', 'localhost:5000']);
  assert.equal(use.code, 0, use.stderr);
});
after(async () => {
  if (s) await deleteNamespace(s);
  if (work) rmSync(work, { recursive: true, force: true });
});

function devtool(args: string[], timeoutMs = 300_000, extraEnv: NodeJS.ProcessEnv = {}) {
  return runDevtool(args, { cwd: app, timeoutMs, env: { ...s.env, DOCKER_HOST: dockerHost, ...extraEnv } });
}

function deploy(extraArgs: string[] = [], extraEnv: NodeJS.ProcessEnv = {}) {
  const started = Date.now();
  const r = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--wait', '--timeout', '4m', ...extraArgs], 300_000, extraEnv);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
  return { ...r, seconds: (Date.now() - started) / 1000 };
}

/** An HTTP GET of the web Service from the store pod (bash's /dev/tcp: the image has no curl). */
async function getThroughService(path: string): Promise<string> {
  const pod = await runningPod(s.core, s.namespace, 'devtool.dev/service=store');
  const script = `exec 3<>/dev/tcp/web/8080 && printf 'GET ${path} HTTP/1.0\\r\\nHost: web\\r\\n\\r\\n' >&3 && cat <&3`;
  const r = await execInPod(s.kc, s.namespace, pod, ['bash', '-c', script]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

async function webImage(name = 'web'): Promise<string> {
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  return (await apps.readNamespacedDeployment({ name, namespace: s.namespace })).spec!.template.spec!.containers[0]!.image!;
}

let firstImage: string;

test('nginx serves the page its host-volume configuration and folder give, through its Service', { timeout: 600_000 }, async () => {
  const r = deploy();
  const baked = r.stderr.match(/✓ image of web with its host volumes built and pushed in (\S+): (\S+)/);
  assert.ok(baked, `the web image is baked:\n${r.stderr}`);
  console.log(`bake of web (nginx + nginx.conf + site), not cached: ${baked[1]}; whole deploy ${r.seconds.toFixed(1)} s`);
  assert.match(r.stderr, /^! service web: host volume \/etc\/localtime:\/etc\/localtime is not deployed: it is outside the Compose folder$/m);
  firstImage = await webImage();
  assert.equal(firstImage, baked[2]);
  assert.match(firstImage, new RegExp(`^${REGISTRY}/${ENV}-web:devtool-[0-9a-f]{24}$`));

  const page = await getThroughService('/');
  assert.match(page, /^HTTP\/1\.1 200/);
  assert.match(page, new RegExp(`X-Config: from-host-${runId}`), 'the header of ./nginx.conf');
  assert.match(page, new RegExp(`<h1>site ${runId}</h1>`), 'the page of ./site');
  assert.match(await getThroughService('/conf'), new RegExp(`configured by ./nginx.conf ${runId}`));
  assert.match(await getThroughService('/secret.txt'), /^HTTP\/1\.1 404/, "the folder's .dockerignore keeps secret.txt out");

  await assertModes();

  const api = await runningPod(s.core, s.namespace, 'devtool.dev/service=api');
  const both = await execInPod(s.kc, s.namespace, api, ['cat', '/built.txt', '/etc/api/app.conf']);
  assert.equal(both.stdout, `built ${runId}\nconf ${runId}\n`, 'the host volume is added to the image the build gave');
});

async function assertModes(): Promise<void> {
  const web = await runningPod(s.core, s.namespace, 'devtool.dev/service=web');
  const mode = await execInPod(s.kc, s.namespace, web, ['stat', '-c', '%a %U', '/etc/nginx/conf.d/default.conf', '/usr/share/nginx/html/index.html']);
  assert.equal(mode.stdout, '444 root\n644 root\n', 'the :ro file lost its write bits, the other kept its mode');
}

test('a missing ./data is a claim of runtime data: a file written there survives a pod restart', { timeout: 300_000 }, async () => {
  const claim = await s.core.readNamespacedPersistentVolumeClaim({ name: 'store-data', namespace: s.namespace });
  assert.equal(claim.metadata?.labels?.['devtool.dev/environment'], ENV);
  const pod = await runningPod(s.core, s.namespace, 'devtool.dev/service=store');
  const write = await execInPod(s.kc, s.namespace, pod, ['sh', '-c', `echo kept ${runId} > /data/kept.txt`]);
  assert.equal(write.code, 0, write.stderr);
  await s.core.deleteNamespacedPod({ name: pod, namespace: s.namespace, gracePeriodSeconds: 0 });
  let next = '';
  await waitFor(
    'a new store pod',
    async () => {
      next = await runningPod(s.core, s.namespace, 'devtool.dev/service=store').catch(() => '');
      return next !== '' && next !== pod;
    },
    180_000,
  );
  const read = await execInPod(s.kc, s.namespace, next, ['cat', '/data/kept.txt']);
  assert.equal(read.stdout, `kept ${runId}\n`, read.stderr);
});

test('unchanged files reuse the pushed image (dry run shows it); a changed page makes a new one', { timeout: 600_000 }, async () => {
  const again = deploy();
  assert.match(again.stderr, /✓ host volumes of web are up to date: \S+ is in the registry, build skipped/);
  assert.equal(await webImage(), firstImage);
  console.log(`second deploy, nothing changed (cached): ${again.seconds.toFixed(1)} s`);

  const dry = devtool(['deploy', '--dry-run', '--name', ENV, '--namespace', s.namespace]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.ok(dry.stdout.includes(`image: ${firstImage}`), `dry run shows ${firstImage}:\n${dry.stdout}`);
  const api = await webImage('api');
  assert.ok(dry.stdout.includes(`image: ${api}`), `dry run shows the api's baked image, FROM its build's content reference, ${api}`);
  assert.match(dry.stderr, /host volume \/etc\/localtime:\/etc\/localtime is not deployed/);
  assert.doesNotMatch(dry.stderr, /built and pushed/);

  writeFileSync(join(app, 'site', 'index.html'), `<h1>changed ${runId}</h1>\n`);
  const changed = deploy();
  assert.match(changed.stderr, /✓ image of web with its host volumes built and pushed in/);
  const image = await webImage();
  assert.notEqual(image, firstImage);
  await waitFor('the new page', async () => (await getThroughService('/')).includes(`<h1>changed ${runId}</h1>`), 120_000);
});

test('deploy --build bakes again, on a BuildKit daemon (BUILDKIT_HOST) too: same files, same reference and modes', { timeout: 600_000 }, async () => {
  const address = await ensureBuildkit();
  const before = await webImage();
  const r = deploy(['--build'], { BUILDKIT_HOST: address });
  assert.match(r.stderr, /• adding the host volumes of web \(3 files, \d+ bytes\) to \S+ with buildkit \(tcp:\/\/[^)]+\): \S+/);
  const baked = r.stderr.match(/✓ image of web with its host volumes built and pushed in (\S+): (\S+)/);
  assert.ok(baked, r.stderr);
  console.log(`bake of web with --build on BuildKit: ${baked[1]}`);
  assert.equal(baked[2], before, 'the content tag does not depend on the backend');
  await assertModes();
  assert.match(await getThroughService('/'), new RegExp(`<h1>changed ${runId}</h1>`));
});

test('./data given content is baked; emptied again, the service is back on its claim, data included', { timeout: 600_000 }, async () => {
  mkdirSync(join(app, 'data'));
  writeFileSync(join(app, 'data', 'seed.txt'), `seed ${runId}\n`);
  const baked = deploy();
  assert.match(baked.stderr, /✓ image of store with its host volumes built and pushed in/);
  const store = async (script: string) =>
    execInPod(s.kc, s.namespace, await runningPod(s.core, s.namespace, 'devtool.dev/service=store'), ['sh', '-c', script]);
  assert.equal((await store('ls /data')).stdout, 'seed.txt\n', 'the baked folder, not the claim');

  // An existing Deployment changes its update strategy: server-side apply must accept it.
  rmSync(join(app, 'data', 'seed.txt'));
  deploy();
  assert.equal((await store('cat /data/kept.txt')).stdout, `kept ${runId}\n`, 'the claim and its data again');
});
