/**
 * The release's images and packaged chart as a team installs them: scripts/release/images.sh builds
 * the OCI archives (each an index for linux/amd64 and linux/arm64, checked), pushes them to the
 * local registry standing in for the public one (DEVTOOL_RELEASE_REGISTRY=localhost:5000/<run>),
 * scripts/release/chart.sh packages the chart naming them by digest, and `helm install` of that
 * .tgz with no image values, in a namespace and release of its own behind the local front door
 * (scripts/service-up.sh's DEVTOOL_SERVICE_RELEASE layout), runs the release's service, builder and
 * runner images: the service answers, a user's token logs in. Then `helm upgrade` to a second
 * build (the service's image at a new digest) keeps the user, its token and its namespaces. The
 * front door's two images cannot take the node's ports beside the shared front door: a pod of each
 * runs its program's version instead.
 *
 * Uses the installed service's front door: hold the service lock for the whole run.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';
import { CA_FILE, httpsGet, serviceCall, whenAnswering } from './installed-service.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const RELEASE = `rel${run}`;
const URL_ = `https://devtool-${RELEASE}.devtool.test`;
const REGISTRY = `localhost:5000/release-${run}`;
const user = `e2erel${run}`;
const VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const out = mkdtempSync(join(tmpdir(), 'devtool-release-'));
const helmBin = script('cluster/helm.sh', ['path']);

let kubeconfig = '';
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let token = '';
/** The user's CLI home, kept from the install to the upgrade. */
let sb: Sandbox | undefined;
const shop = `shop${run}`;

/** A script of the checkout; its stdout's last line. */
function script(path: string, args: string[], env: Record<string, string> = {}, timeout = 1_800_000): string {
  const started = Date.now();
  const r = spawnSync('bash', [join(repoRoot, path), ...args], { encoding: 'utf8', timeout, env: { ...process.env, ...env } });
  assert.equal(r.status, 0, `${path} ${args.join(' ')} failed:\n${r.stderr.slice(-4000)}`);
  if (Date.now() - started > 5_000) console.log(`${path} ${args.join(' ')}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return r.stdout.trim().split('\n').at(-1) ?? '';
}

/**
 * A release build into DIR (the archives, checked by images.sh; pushed; the chart): the chart's path.
 * With `from`, the images other than the service's are that earlier build's archives, so only the
 * service's is built again: an upgrade whose service image has a new digest.
 */
function releaseBuild(dir: string, revision: string, from?: string): string {
  const env = { DEVTOOL_RELEASE_REGISTRY: REGISTRY, DEVTOOL_RELEASE_REVISION: revision };
  if (from) {
    mkdirSync(join(dir, 'images'), { recursive: true });
    for (const name of readdirSync(join(from, 'images'))) copyFileSync(join(from, 'images', name), join(dir, 'images', name));
  }
  script('scripts/release/images.sh', [dir, ...(from ? ['devtool-service'] : [])], env);
  script('scripts/release/images.sh', ['push', dir], env, 600_000);
  return script('scripts/release/chart.sh', [dir], env, 300_000);
}

/** helm install or upgrade of the packaged chart: values for this cluster and release, none for images. */
function helmInstall(chart: string) {
  const fd = process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door';
  const builderPort = 1800 + (Number.parseInt(run, 16) % 100);
  const r = spawnSync(
    helmBin,
    [
      'upgrade',
      '--install',
      RELEASE,
      chart,
      '--namespace',
      RELEASE,
      '--create-namespace',
      '--set',
      'ingress.enabled=false',
      '--set',
      `frontDoor.host=devtool-${RELEASE}.devtool.test`,
      '--set-file',
      `ca.certificate=${fd}/ca.crt`,
      '--set-file',
      `ca.key=${fd}/ca.key`,
      '--set',
      'service.registry=localhost:5000',
      '--set',
      'service.replicas=1',
      '--set',
      'builder.enabled=true',
      '--set',
      'builder.hostNetwork=true',
      '--set',
      `builder.port=${builderPort}`,
      '--wait',
      '--timeout',
      '5m',
    ],
    { encoding: 'utf8', timeout: 400_000, env: { ...process.env, KUBECONFIG: kubeconfig } },
  );
  assert.equal(r.status, 0, `helm upgrade --install failed:\n${r.stderr}`);
}

/** The built CLI as the user who logged in to the release's service. */
function devtool(args: string[]) {
  assert.ok(sb, 'needs the sandbox of the first install');
  return runDevtool(args, { env: { ...sb.env, NODE_EXTRA_CA_CERTS: CA_FILE }, timeoutMs: 60_000 });
}

/** The images of the release's pods (container name -> image). */
async function podImages(selector: string): Promise<string[]> {
  const pods = (await core.listNamespacedPod({ namespace: RELEASE, labelSelector: selector })).items;
  return pods.filter((p) => !p.metadata?.deletionTimestamp).flatMap((p) => (p.spec?.containers ?? []).map((c) => c.image ?? ''));
}

/** The packaged chart's default image at a value path, e.g. service.image. */
function chartImage(chart: string, key: string): string {
  const values = parse(spawnSync(helmBin, ['show', 'values', chart], { encoding: 'utf8' }).stdout) as unknown;
  const image = key.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], values);
  assert.equal(typeof image, 'string', `${key} in the packaged chart's values`);
  return image as string;
}

/** Runs IMAGE with COMMAND in a pod of the release's namespace; its log once it succeeded. */
async function runPod(name: string, image: string, command: string[]): Promise<string> {
  await core.createNamespacedPod({
    namespace: RELEASE,
    body: {
      metadata: { name },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image, command }],
      },
    },
  });
  await waitFor(
    `pod ${name} to end`,
    async () => {
      const phase = (await core.readNamespacedPod({ name, namespace: RELEASE })).status?.phase;
      return phase === 'Succeeded' || phase === 'Failed';
    },
    180_000,
  );
  const pod = await core.readNamespacedPod({ name, namespace: RELEASE });
  const log = await core.readNamespacedPodLog({ name, namespace: RELEASE });
  assert.equal(pod.status?.phase, 'Succeeded', `${image} ${command.join(' ')}: ${log}`);
  return log;
}

before(async () => {
  const cluster = await ensureCluster();
  kubeconfig = cluster.kubeconfigPath;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  // The shared front door serves this release's host: install it when it does not answer.
  const frontDoor = await httpsGet('https://devtool.devtool.test/healthz', readFileSync(CA_FILE, 'utf8')).catch(() => ({ status: 0 }));
  if (frontDoor.status !== 200) script('scripts/service-up.sh', [], { DEVTOOL_SERVICE_RELEASE: '' });
});

after(async () => {
  if (!core) return;
  spawnSync(helmBin, ['uninstall', RELEASE, '--namespace', RELEASE, '--wait', '--timeout', '2m'], { env: { ...process.env, KUBECONFIG: kubeconfig } });
  const owned = await core.listNamespace({ labelSelector: `devtool.dev/owner=${user}` }).catch(() => ({ items: [] }));
  for (const ns of owned.items) await core.deleteNamespace({ name: ns.metadata!.name! }).catch(() => {});
  await core.deleteNamespace({ name: RELEASE }).catch(() => {});
  rmSync(out, { recursive: true, force: true });
});

describe('the release: multi-arch image archives and the packaged chart', () => {
  let chart = '';

  // A few minutes with the build caches warm; cold, the arm64 builds of kubectl, helm and buildkitd
  // alone take longer than the runner's 10 minutes per test.
  test('images.sh writes and checks an index for amd64 and arm64 per image; chart.sh names them by digest', { timeout: 3_600_000 }, () => {
    chart = releaseBuild(join(out, 'first'), 'first');
    assert.equal(chart, join(out, 'first', 'chart', `devtool-${VERSION}.tgz`));
    for (const name of ['devtool-bin', 'devtool-service', 'devtool-ingress', 'devtool-caddy', 'devtool-runner', 'devtool-builder']) {
      const index = JSON.parse(
        spawnSync('tar', ['-xOf', join(out, 'first', 'images', `${name}-${VERSION}.tar`), './index.json'], { encoding: 'utf8' }).stdout,
      ) as { manifests: { digest: string }[] };
      assert.match(index.manifests[0]!.digest, /^sha256:[0-9a-f]{64}$/);
    }
    assert.match(chartImage(chart, 'service.image'), new RegExp(`^${REGISTRY}/devtool-service:${VERSION}@sha256:[0-9a-f]{64}$`));
    assert.match(chartImage(chart, 'ingress.proxy.image'), new RegExp(`^${REGISTRY}/devtool-caddy:${VERSION}@sha256:`));
  });

  test('helm install of the .tgz with no image values: the service answers, a token logs in', async () => {
    assert.ok(chart, 'needs the release build');
    await core.createNamespace({ body: { metadata: { name: RELEASE, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
    helmInstall(chart);
    assert.deepEqual(await podImages('app.kubernetes.io/component=service'), [chartImage(chart, 'service.image')]);
    const info = await whenAnswering(`${URL_}/api/v1/info`, readFileSync(CA_FILE, 'utf8'));
    assert.match(info.body ?? '', /"version"/);
    const made = spawnSync('bash', [join(repoRoot, 'scripts/service-user.sh'), user], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, DEVTOOL_SERVICE_NAMESPACE: RELEASE },
    });
    assert.equal(made.status, 0, made.stderr);
    token = made.stdout.trim().split('\n').at(-1)!;
    sb = createSandbox();
    const use = devtool(['context', 'use', URL_, '--token', token]);
    assert.equal(use.code, 0, use.stderr);
    assert.match(use.stdout, new RegExp(`^Using context ${URL_} as ${user}:`));
    const created = devtool(['namespace', 'create', shop]);
    assert.equal(created.code, 0, created.stderr);
    const builder = await apps.readNamespacedDeployment({ name: `${RELEASE}-builder`, namespace: RELEASE });
    assert.equal(builder.status?.readyReplicas, 1, 'the release builder image runs');
  });

  test("the front door's and the runner's images run their programs", async () => {
    assert.ok(chart, 'needs the release build');
    assert.match(await runPod('caddy', chartImage(chart, 'ingress.proxy.image'), ['caddy', 'version']), /^v?2\./);
    const ingress = await runPod('ingress', chartImage(chart, 'ingress.controller.image'), [
      'node',
      '-e',
      'require("fs").statSync("/app/devtool-ingress.cjs"); console.log(process.version)',
    ]);
    assert.match(ingress, /^v20\./);
    const runner = await runPod('runner', chartImage(chart, 'pipelines.runnerImage'), [
      '/bin/sh',
      '-c',
      'devtool version && kubectl version --client && helm version --short && git --version',
    ]);
    assert.match(runner, new RegExp(VERSION));
    assert.match(runner, /Client Version: v1\./);
    assert.match(runner, /git version/);
  });

  test('helm upgrade to a second build keeps the user, its token and its namespaces', { timeout: 1_200_000 }, async () => {
    assert.ok(token, 'needs the first install');
    const second = releaseBuild(join(out, 'second'), 'second', join(out, 'first'));
    const image = chartImage(second, 'service.image');
    assert.notEqual(image, chartImage(chart, 'service.image'), 'a second build, other digests');
    helmInstall(second);
    await waitFor(
      'the service pods of the second build',
      async () => (await podImages('app.kubernetes.io/component=service')).every((i) => i === image),
      120_000,
    );
    const me = await serviceCall(URL_, readFileSync(CA_FILE, 'utf8'), token, 'GET', '/api/v1/tokens');
    assert.equal(me.status, 200, me.body);
    // The CLI logged in before the upgrade goes on with its stored token, and sees its namespaces.
    const list = devtool(['namespace', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(
      list.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(/\s{3,}/)),
      [
        ['Namespace', 'Status'],
        [`${user}-devtool`, 'Active'],
        [`${shop} *`, 'Active'],
      ],
    );
  });
});
