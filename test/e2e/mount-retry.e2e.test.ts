/**
 * MountRetry (src/kube/mount-retry.ts) against the real kubelet. The race it answers (the node
 * authorizer not yet letting the kubelet read a new pod's claim) cannot be caused at will, but the
 * kubelet takes the same path for a claim it cannot read because it does not exist yet: a FailedMount
 * event "failed to process volumes=[…]", then its 10 s back-off. Two pods bound to the node, each
 * with a claim made only after that event: the one MountRetry watches runs while its twin still
 * waits out the back-off.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { MountRetry, MOUNT_RETRY_ANNOTATION } from '../../src/kube/mount-retry.ts';
import { clusterSandbox, deleteNamespace, REGISTRY, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;

before(async () => {
  s = await clusterSandbox('mount-retry');
});
after(async () => {
  await deleteNamespace(s);
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

async function failedMountSeen(name: string): Promise<boolean> {
  const events = await s.core.listNamespacedEvent({ namespace: s.namespace, fieldSelector: `involvedObject.name=${name},reason=FailedMount` });
  return events.items.some((e) => /failed to process volumes=\[data\]/.test(e.message ?? ''));
}

async function firstFailedMount(name: string): Promise<number> {
  const events = await s.core.listNamespacedEvent({ namespace: s.namespace, fieldSelector: `involvedObject.name=${name},reason=FailedMount` });
  return Math.min(...events.items.map((e) => new Date(e.firstTimestamp ?? e.eventTime ?? 0).getTime()));
}

async function until(what: string, cond: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('a pod the kubelet backed off from over its volumes starts once asked, before its twin that nobody asked', { timeout: 120_000 }, async () => {
  const node = (await s.core.listNode()).items[0]!.metadata!.name!;
  for (const name of ['asked', 'twin']) await s.core.createNamespacedPod({ namespace: s.namespace, body: podWithClaim(name, node) });
  await until('the FailedMount event of both pods', async () => (await failedMountSeen('asked')) && (await failedMountSeen('twin')), 30_000);

  for (const name of ['asked', 'twin'])
    await s.core.createNamespacedPersistentVolumeClaim({
      namespace: s.namespace,
      body: { metadata: { name: `${name}-data` }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
    });
  const lines: string[] = [];
  const retry = new MountRetry({ core: s.core, namespace: s.namespace }, (l) => lines.push(l));
  await until(
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
  await until('the twin running', async () => running(await read('twin')), 60_000);
});
