/**
 * MountRetry (src/kube/mount-retry.ts) against the real kubelet. The race it answers (the node
 * authorizer not yet letting the kubelet read a new pod's claim) cannot be caused at will, but the
 * kubelet takes the same path for a claim it cannot read because it does not exist yet: a FailedMount
 * event "failed to process volumes=[…]", then its 10 s back-off. Two pods bound to the node, each
 * with a claim made only after that event: the one MountRetry watches runs while its twin still
 * waits out the back-off. And `up` itself, run as a user would, on a Deployment bound to the node
 * whose pods mount such a claim: its dev pod is asked again and starts as soon as the claim is.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { MountRetry, MOUNT_RETRY_ANNOTATION } from '../../src/kube/mount-retry.ts';
import { clusterSandbox, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';

let s: ClusterSandbox;
let env: NodeJS.ProcessEnv;
let folder: string;

before(async () => {
  s = await clusterSandbox('mount-retry');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  folder = join(s.root, 'project');
  mkdirSync(folder);
});
after(async () => {
  await tearDownDev(s, env, [folder]);
});

const podWithClaim = (name: string, node: string): V1Pod => ({
  metadata: { name },
  spec: {
    // Bound at once, as the scheduler would after a claim was found: the kubelet then looks for it.
    nodeName: node,
    terminationGracePeriodSeconds: 0,
    containers: [{ name: 'main', image: `${REGISTRY}/debian:bookworm`, command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }],
  },
});

const read = (name: string) => s.core.readNamespacedPod({ name, namespace: s.namespace });
const running = (p: V1Pod) => p.status?.phase === 'Running';

/** The kubelet's FailedMount events of pod `name` whose volume `volume` it could not process. */
async function failedMounts(name: string, volume = 'data') {
  const events = await s.core.listNamespacedEvent({ namespace: s.namespace, fieldSelector: `involvedObject.name=${name},reason=FailedMount` });
  return events.items.filter((e) => (e.message ?? '').includes(`failed to process volumes=[${volume}]`));
}

/** When the kubelet first failed to process pod `name`'s volumes (its own clock, to the second). */
async function firstFailedMount(name: string, volume?: string): Promise<number> {
  return Math.min(...(await failedMounts(name, volume)).map((e) => new Date(e.firstTimestamp ?? e.eventTime ?? 0).getTime()));
}

/**
 * The pods here name their node (nodeName), so no scheduler picks one for them: a claim of a
 * WaitForFirstConsumer class (the local cluster's default) would never get its volume. `standard`
 * binds at once (cluster/README.md, "Storage").
 */
const IMMEDIATE_CLASS = 'standard';

const createClaim = (name: string) =>
  s.core.createNamespacedPersistentVolumeClaim({
    namespace: s.namespace,
    body: { metadata: { name }, spec: { storageClassName: IMMEDIATE_CLASS, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
  });

test('a pod the kubelet backed off from over its volumes starts once asked, before its twin that nobody asked', { timeout: 120_000 }, async () => {
  const node = (await s.core.listNode()).items[0]!.metadata!.name!;
  for (const name of ['asked', 'twin']) await s.core.createNamespacedPod({ namespace: s.namespace, body: podWithClaim(name, node) });
  await waitFor('the FailedMount event of both pods', async () => (await failedMounts('asked')).length > 0 && (await failedMounts('twin')).length > 0, 30_000);

  for (const name of ['asked', 'twin']) await createClaim(`${name}-data`);
  const lines: string[] = [];
  const retry = new MountRetry({ core: s.core, namespace: s.namespace }, (l) => lines.push(l));
  await waitFor(
    'the asked pod running',
    async () => {
      const pod = await read('asked');
      await retry.check([pod]);
      return running(pod);
    },
    60_000,
  );

  // By the kubelet's own clock: the container started sooner after the failure than the back-off
  // (at least 10 s) would have let it.
  const failedAt = await firstFailedMount('asked');
  const startedAt = new Date((await read('asked')).status?.containerStatuses?.[0]?.state?.running?.startedAt ?? 0).getTime();
  assert.ok(startedAt - failedAt <= 8000, `started ${(startedAt - failedAt) / 1000} s after the failure`);
  const twin = await read('twin');
  assert.equal(running(twin), false, `the twin waits out the kubelet's back-off: ${JSON.stringify(twin.status?.containerStatuses?.[0]?.state)}`);
  assert.ok((await read('asked')).metadata?.annotations?.[MOUNT_RETRY_ANNOTATION], 'asked through the annotation');
  assert.match(
    lines[0] ?? '',
    /^pod asked: the kubelet could not read its volumes yet \(failed to fetch PVC from API server: .*not found\); asking it to try again now/,
  );
  // The twin does start, by itself: nothing was broken, only late.
  await waitFor('the twin running', async () => running(await read('twin')), 60_000);
});

test('up: a dev pod the kubelet backed off from over a claim it could not read is asked again, and ready soon after the claim is', {
  timeout: 300_000,
}, async () => {
  const node = (await s.core.listNode()).items[0]!.metadata!.name!;
  // Bound to the node in its template (the dev pod inherits it), and mounting a claim made only
  // once the dev pod's kubelet has failed on it: the path of the node authorizer's race.
  await s.kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
    namespace: s.namespace,
    body: {
      metadata: { name: 'late' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'late' } },
        template: {
          metadata: { labels: { app: 'late' } },
          spec: {
            nodeName: node,
            containers: [
              { name: 'late', image: `${REGISTRY}/debian:bookworm`, command: ['sleep', 'infinity'], volumeMounts: [{ name: 'extra', mountPath: '/extra' }] },
            ],
            volumes: [{ name: 'extra', persistentVolumeClaim: { claimName: 'late-extra' } }],
          },
        },
      },
    },
  });
  // The dev pod inherits the nodeName: its own claim too is of the class that binds at once.
  writeFileSync(join(folder, 'devtool.yml'), `services:\n  late:\n    sync: [".:/app"]\n    persistentVolume: {storageClass: ${IMMEDIATE_CLASS}}\n`);
  const starting = startUp(['-n', s.namespace], { env, cwd: folder });
  const devPod = async () =>
    (await s.core.listNamespacedPod({ namespace: s.namespace, labelSelector: 'devtool.dev/dev-pod=late' })).items[0]?.metadata?.name ?? '';
  await waitFor('the dev pod failing on its claim', async () => (await failedMounts(await devPod(), 'extra')).length > 0, 120_000);
  await createClaim('late-extra');
  const up = await starting;

  const pod = await s.core.readNamespacedPod({ name: await devPod(), namespace: s.namespace });
  const failedAt = await firstFailedMount(pod.metadata!.name!, 'extra');
  const startedAt = new Date(pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? 0).getTime();
  assert.ok(startedAt - failedAt <= 8000, `the dev container started ${(startedAt - failedAt) / 1000} s after the failure:\n${up.output()}`);
  assert.ok(pod.metadata?.annotations?.[MOUNT_RETRY_ANNOTATION], 'asked through the annotation');
  const log = join(env.DEVTOOL_HOME ?? '', 'devtool.log');
  assert.ok(existsSync(log));
  assert.match(
    readFileSync(log, 'utf8'),
    new RegExp(
      'late: pod late-devtool-\\S+: the kubelet could not read its volumes yet ' +
        '\\(failed to fetch PVC from API server: persistentvolumeclaims "late-extra" not found\\); asking it to try again now',
    ),
  );
  await up.stop();
});
