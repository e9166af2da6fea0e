/**
 * `deploy` and `up` in a namespace with a ResourceQuota that demands CPU requests and limits and
 * memory limits of every container, and a LimitRange that defaults memory only and bounds it
 * (docs/manifest.md, "Quotas and limit ranges"): a Compose deploy whose services name their CPU; a
 * deploy command's Deployment without them, whose wait fails at once naming the quota;
 * `up` of a Deployment in a namespace whose pod count is full (the swap frees the original's pod),
 * an edit synced, `down` restoring it; and each refusal (a service without its CPU, a dev pod with
 * no pod left in the quota, a dev volume larger than the quota's storage, a dev container above the
 * LimitRange's maximum) as one line, a non-zero exit and nothing changed.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lines, runDevtool } from './cli.ts';
import { clusterSandbox, createQuota, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';

const IMAGE = `${REGISTRY}/debian:bookworm`;
const QUOTA = { pods: '2', 'requests.cpu': '1', 'limits.cpu': '2', 'limits.memory': '2Gi', 'requests.storage': '10Gi', persistentvolumeclaims: '2' };

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
let env: NodeJS.ProcessEnv;
let compose: string;
let project: string;
let commands: string;

before(async () => {
  s = await clusterSandbox('quota');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  await createQuota(s, 'compute', QUOTA);
  await s.core.createNamespacedLimitRange({
    namespace: s.namespace,
    body: {
      metadata: { name: 'bounds' },
      spec: { limits: [{ type: 'Container', _default: { memory: '256Mi' }, defaultRequest: { memory: '64Mi' }, max: { memory: '512Mi' } }] },
    },
  });
  compose = join(s.root, 'compose');
  mkdirSync(join(compose, 'bad'), { recursive: true });
  const service = (name: string, resources: string) =>
    `  ${name}:\n    image: ${IMAGE}\n    command: ["sleep", "infinity"]\n    stop_grace_period: 1s\n${resources}`;
  writeFileSync(join(compose, 'compose.yaml'), `services:\n${service('web', '    deploy:\n      resources:\n        limits: {cpus: "0.2"}\n')}`);
  writeFileSync(join(compose, 'bad', 'compose.yaml'), `services:\n${service('bare', '')}`);

  // A manifest whose deploy command makes a Deployment of its own, without resources.
  commands = join(s.root, 'commands');
  mkdirSync(commands);
  writeFileSync(join(commands, 'devtool.yml'), `deploy:\n  - kubectl create deployment plain --image=${IMAGE} -- sleep infinity\n`);

  project = join(s.root, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'devtool.yml'),
    [
      'services:',
      '  api:',
      '    sync: [".:/app"]',
      // No pod of its own in the quota: a standalone dev container swaps nothing out.
      '  tools:',
      `    image: ${IMAGE}`,
      '    autocreate: true',
      '    resources: {requests: {cpu: 50m}, limits: {cpu: 100m}}',
      // Above the LimitRange's maximum of 512Mi.
      '  big:',
      '    selector: {app: api}',
      '    resources: {requests: {cpu: 100m}, limits: {cpu: 500m, memory: 1Gi}}',
      // Above the quota's 10Gi of storage.
      '  huge:',
      '    selector: {app: api}',
      '    persistentVolume: {size: 20Gi}',
      '',
    ].join('\n'),
  );
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, [project]));

// Options go before the command's words: everything after `--` is the remote command.
const devtool = ([cmd, ...args]: string[], cwd: string, timeoutMs = 120_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd, timeoutMs });

/** The client's model object as plain data, for deepEqual. */
const plain = (o: unknown): unknown => JSON.parse(JSON.stringify(o));

/** One error line, exit 1: the refusal as a user sees it. */
function refused(r: { code: number | null; stderr: string }, line: string): void {
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(
    lines(r.stderr).filter((l) => l.startsWith('Error: ')),
    [`Error: ${line}`],
    r.stderr,
  );
}

/** The original api as the test deployed it: one replica, no dev annotation, no dev Deployment beside it. */
async function assertApiUntouched(): Promise<void> {
  const original = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  assert.equal(original.spec?.replicas, 1);
  assert.equal(original.metadata?.annotations?.['devtool.dev/dev-folder'], undefined);
  await assert.rejects(apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace }));
}

/** The quota's count of `resource`, once the controller has caught up with the namespace. */
async function quotaUsed(resource: string, value: string): Promise<void> {
  await waitFor(
    `quota compute to count ${resource}=${value}`,
    async () => (await s.core.readNamespacedResourceQuota({ name: 'compute', namespace: s.namespace })).status?.used?.[resource] === value,
    60_000,
  );
}

test('a Compose service that names its CPU deploys; memory comes from the LimitRange', { timeout: 300_000 }, async () => {
  const r = devtool(['deploy', '--name', 'shop', '--wait', '--timeout', '3m'], compose, 240_000);
  assert.equal(r.code, 0, r.stderr);
  const pod = (await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: 'devtool.dev/service=web' })).items[0]!;
  assert.deepEqual(plain(pod.spec?.containers[0]?.resources), { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } });
});

test('a Compose service without the CPU the quota demands: one line naming the service and the quota, nothing applied', { timeout: 120_000 }, async () => {
  const r = devtool(['deploy', '--name', 'bare'], join(compose, 'bad'));
  refused(
    r,
    `cannot deploy service bare (Deployment bare) in namespace ${s.namespace}: quota "compute" (limits.cpu, requests.cpu) demands a cpu limit ` +
      'and a cpu request of every container, and container "bare" names neither (no LimitRange gives a default); set deploy.resources.limits.cpus ' +
      'and deploy.resources.reservations.cpus of service bare in the Compose file; nothing was applied',
  );
  await assert.rejects(apps.readNamespacedDeployment({ name: 'bare', namespace: s.namespace }));
});

test("a deploy command's Deployment whose pods the quota refuses: deploy --wait fails at once, naming it", { timeout: 180_000 }, async () => {
  const started = Date.now();
  const r = devtool(['deploy', '--name', 'plain', '--wait', '--timeout', '2m'], commands, 150_000);
  const elapsed = Date.now() - started;
  refused(r, 'Deployment/plain failed: its pods are refused: failed quota: compute: must specify limits.cpu for: debian; requests.cpu for: debian');
  assert.ok(elapsed < 60_000, `refused in ${elapsed} ms, not at the 2m timeout`);
  const destroy = devtool(['destroy', '--name', 'plain'], commands);
  assert.equal(destroy.code, 0, destroy.stderr);
  console.log(`deploy --wait of a refused Deployment: failed after ${elapsed} ms`);
});

test('up where the quota has no pod left: the swap frees the original, an edit syncs, down restores it', { timeout: 480_000 }, async () => {
  await apps.createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name: 'api', labels: { app: 'api' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'api' } },
        template: {
          metadata: { labels: { app: 'api' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'api', image: IMAGE, command: ['sleep', 'infinity'], resources: { requests: { cpu: '100m' }, limits: { cpu: '500m' } } }],
          },
        },
      },
    },
  });
  await waitFor(
    'the original api ready',
    async () => (await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace })).status?.readyReplicas === 1,
    120_000,
  );
  await quotaUsed('pods', '2');

  const started = Date.now();
  const session = await startUp(['api', '-n', s.namespace], { env, cwd: project });
  const upMs = Date.now() - started;
  try {
    const mirror = await apps.readNamespacedDeployment({ name: 'api-devtool', namespace: s.namespace });
    // The quota demands a CPU limit no LimitRange defaults: devtool's installer gets its small fixed one.
    assert.deepEqual(plain(mirror.spec?.template.spec?.initContainers?.[0]?.resources), {
      requests: { cpu: '10m', memory: '16Mi' },
      limits: { memory: '64Mi', cpu: '100m' },
    });
    writeFileSync(join(project, 'edit.txt'), 'saved on this machine\n');
    await waitFor(
      'the edit to reach the dev container',
      () => devtool(['exec', 'api', '--', 'cat', '/app/edit.txt'], project, 30_000).stdout === 'saved on this machine\n',
      60_000,
    );
  } finally {
    await session.stop();
  }
  // With its volume: the storage the last case counts on is the quota's whole 10Gi.
  const down = devtool(['down', 'api', '--volumes'], project);
  assert.equal(down.code, 0, down.stderr);
  await assertApiUntouched();
  console.log(`up in the full namespace: ready in ${upMs} ms`);
});

test('up with no pod left in the quota and no original to swap: one line naming the quota, nothing created', { timeout: 180_000 }, async () => {
  await quotaUsed('pods', '2');
  const r = devtool(['up', 'tools'], project);
  refused(
    r,
    `dev container tools cannot start in namespace ${s.namespace}: quota "compute" has no room for pods: it needs 1 more, and 2 of 2 is used; ` +
      'free room in the namespace (scale something down), or ask for a larger quota; nothing was changed',
  );
  await assert.rejects(apps.readNamespacedDeployment({ name: 'tools-devtool', namespace: s.namespace }));
  await assert.rejects(s.core.readNamespacedSecret({ name: 'tools-devtool', namespace: s.namespace }));
  await assert.rejects(s.core.readNamespacedPersistentVolumeClaim({ name: 'tools-devtool', namespace: s.namespace }));
});

test('a dev container above the LimitRange maximum: one line naming the LimitRange, the original untouched', { timeout: 180_000 }, async () => {
  const r = devtool(['up', 'big'], project);
  refused(
    r,
    `dev container big cannot start in namespace ${s.namespace}: LimitRange "bounds" allows at most 512Mi of memory limit per container, and ` +
      'container "api" asks 1Gi; set services.big.resources in the manifest (requests and limits of memory); nothing was changed',
  );
  await assertApiUntouched();
});

test('a dev volume larger than the storage the quota has left: one line naming the quota, the original untouched', { timeout: 180_000 }, async () => {
  await quotaUsed('requests.storage', '0');
  const r = devtool(['up', 'huge'], project);
  refused(
    r,
    `dev container huge cannot start in namespace ${s.namespace}: quota "compute" has no room for requests.storage: it needs 20Gi more, and ` +
      '0 of 10Gi is used; set services.huge.persistentVolume.size smaller (or persistentVolume.enabled: false), or free room in the namespace; ' +
      'nothing was changed',
  );
  await assertApiUntouched();
});
