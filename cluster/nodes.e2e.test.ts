/**
 * The local cluster with two nodes (DEVTOOL_CLUSTER_NODES=2, cluster/lib/nodes.sh): what only
 * several nodes show. The second node is added in `before` and removed in `after`, whatever
 * happened, so that no other test ever sees it. Everything happens in a throwaway namespace,
 * deleted before the node goes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { ensureNodes, nodeName, restartCluster, stopComponent, waitFor } from './test-cluster.ts';

const ns = `devtool-nodes-${randomBytes(3).toString('hex')}`;
const TIMEOUT = { timeout: 300_000 };
const STATE = process.env.DEVTOOL_CLUSTER_STATE ?? '/var/lib/devtool-cluster';
const node1 = nodeName(1);
const node2 = nodeName(2);
let core: k8s.CoreV1Api;
let registry: string;

const gone = (read: () => Promise<unknown>) => async () => {
  try {
    await read();
    return undefined;
  } catch (e) {
    if (e instanceof k8s.ApiException && e.code === 404) return true;
    throw e;
  }
};

/** A pod scheduled (by the scheduler, through its node selector) to `node`. */
function podOn(
  node: string,
  name: string,
  image: string,
  command: string[] | undefined,
  extra: Partial<k8s.V1PodSpec> = {},
  container: Partial<k8s.V1Container> = {},
): k8s.V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      nodeSelector: { 'kubernetes.io/hostname': node },
      containers: [{ name: 'main', image, ...(command ? { command } : {}), ...container }],
      ...extra,
    },
  };
}

/** Runs a pod to completion; returns the pod and its log, failing with the log if it did not succeed. */
async function runToCompletion(p: k8s.V1Pod): Promise<{ pod: k8s.V1Pod; log: string }> {
  const name = p.metadata!.name!;
  await core.createNamespacedPod({ namespace: ns, body: p });
  const done = await waitFor(`pod ${name} to finish`, async () => {
    const read = await core.readNamespacedPod({ name, namespace: ns });
    return read.status?.phase === 'Succeeded' || read.status?.phase === 'Failed' ? read : undefined;
  });
  const log = await core.readNamespacedPodLog({ name, namespace: ns, container: 'main' });
  assert.equal(done.status?.phase, 'Succeeded', `pod ${name} failed; log:\n${log}`);
  return { pod: done, log };
}

async function runningPod(name: string): Promise<k8s.V1Pod> {
  return waitFor(`pod ${name} to be ready`, async () => {
    const p = await core.readNamespacedPod({ name, namespace: ns });
    return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
  });
}

async function nodeReady(name: string): Promise<string | undefined> {
  const node = await core.readNode({ name });
  return node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

/** An nginx pod on `node` and a ClusterIP Service `name` in front of it only. */
async function webOn(node: string, name: string): Promise<{ pod: k8s.V1Pod; service: k8s.V1Service }> {
  await core.createNamespacedPod({
    namespace: ns,
    body: podOn(
      node,
      name,
      `${registry}/nginx:1`,
      undefined,
      { restartPolicy: 'Always' },
      {
        ports: [{ containerPort: 80 }],
        readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 1 },
      },
    ),
  });
  const service = await core.createNamespacedService({
    namespace: ns,
    body: { metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 80 }] } },
  });
  return { pod: await runningPod(name), service };
}

/** From a pod on `node`: GET each URL; the status of each, in order (0 when it failed). */
async function getFrom(node: string, name: string, urls: string[]): Promise<{ statuses: number[]; podIP: string }> {
  const script = `
    (async () => {
      const out = [];
      for (const url of ${JSON.stringify(urls)}) {
        try {
          const res = await fetch(url, { signal: AbortSignal.timeout(20000) });
          out.push(res.status);
        } catch (e) {
          console.error(url, e);
          out.push(0);
        }
      }
      console.log(JSON.stringify(out));
    })();`;
  const { pod, log } = await runToCompletion(podOn(node, name, `${registry}/node:20`, ['node', '-e', script]));
  return { statuses: JSON.parse(log.trim().split('\n').pop()!) as number[], podIP: pod.status!.podIP! };
}

describe('local cluster with two nodes', () => {
  before(async () => {
    const cluster = await ensureNodes(2);
    registry = cluster.registry;
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    // Labelled as test/e2e/cluster.ts labels its namespaces: scripts/test.sh deletes those a cut-off run left.
    await core.createNamespace({ body: { metadata: { name: ns, labels: { 'devtool.dev/e2e': 'true' } } } });
    await waitFor('the default ServiceAccount', async () => (await core.readNamespacedServiceAccount({ name: 'default', namespace: ns })).metadata?.name);
  });

  after(async () => {
    try {
      if (core) {
        // Node 2's pods stop on node 2, and its volumes' folders go with its helper pods, before it goes.
        await core.deleteNamespace({ name: ns }).catch(() => undefined);
        await waitFor(
          `namespace ${ns} to be deleted`,
          gone(() => core.readNamespace({ name: ns })),
          120_000,
        ).catch((e: unknown) => console.error(`warning: ${String(e)}`));
        await waitFor(
          `the volumes of ${ns} to be deleted`,
          async () => ((await core.listPersistentVolume()).items.some((pv) => pv.spec?.claimRef?.namespace === ns) ? undefined : true),
          90_000,
        ).catch((e: unknown) => console.error(`warning: ${String(e)}`));
      }
    } finally {
      await ensureNodes(1);
    }
  });

  test('both nodes are Ready, each with an address of its own', async () => {
    const nodes = (await core.listNode()).items;
    assert.deepEqual(nodes.map((n) => n.metadata?.name).sort(), [node1, node2].sort());
    for (const n of nodes) assert.equal(n.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True', `${n.metadata?.name} Ready`);
    const ips = nodes.map((n) => n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address);
    assert.equal(new Set(ips).size, 2, `two InternalIPs: ${ips.join(', ')}`);
  });

  test('a pod on node 2 pulls a localhost:5000 image from the registry and runs', TIMEOUT, async () => {
    // Node 2's containerd has a store of its own, empty when the node was added: this is a pull.
    const { pod, log } = await runToCompletion(podOn(node2, 'pull', `${registry}/debian:bookworm`, ['sh', '-c', 'echo ran on $(hostname)']));
    assert.equal(pod.spec?.nodeName, node2);
    assert.equal(log.trim(), 'ran on pull');
    assert.match(pod.status?.containerStatuses?.[0]?.imageID ?? '', /^localhost:5000\/debian@sha256:/);
  });

  test('pods on the two nodes reach each other by pod IP, through a ClusterIP Service and by DNS name', TIMEOUT, async () => {
    const web1 = await webOn(node1, 'web-1');
    const web2 = await webOn(node2, 'web-2');
    assert.equal(web1.pod.spec?.nodeName, node1);
    assert.equal(web2.pod.spec?.nodeName, node2);
    assert.notEqual(web1.pod.status?.podIP, web2.pod.status?.podIP);
    const urls = (target: typeof web1, name: string) => [
      `http://${target.pod.status!.podIP!}/`,
      `http://${target.service.spec!.clusterIP!}/`,
      `http://${name}/`,
      `http://${name}.${ns}.svc.cluster.local/`,
    ];
    // Each way across the nodes (DNS: CoreDNS runs on node 1), and within node 2.
    const from2 = await getFrom(node2, 'client-2', urls(web1, 'web-1'));
    assert.deepEqual(from2.statuses, [200, 200, 200, 200], 'node 2 -> node 1: pod IP, ClusterIP, short name, full name');
    const from1 = await getFrom(node1, 'client-1', urls(web2, 'web-2'));
    assert.deepEqual(from1.statuses, [200, 200, 200, 200], 'node 1 -> node 2: pod IP, ClusterIP, short name, full name');
    const within2 = await getFrom(node2, 'client-2b', urls(web2, 'web-2'));
    assert.deepEqual(within2.statuses, [200, 200, 200, 200], 'node 2 -> node 2');
    // No address translation between pods: each server saw the other node's client by its pod IP.
    const log2 = await core.readNamespacedPodLog({ name: 'web-2', namespace: ns, container: 'main' });
    assert.ok(log2.includes(`${from1.podIP} - -`), `web-2 saw client-1 as ${from1.podIP}:\n${log2}`);
    const log1 = await core.readNamespacedPodLog({ name: 'web-1', namespace: ns, container: 'main' });
    assert.ok(log1.includes(`${from2.podIP} - -`), `web-1 saw client-2 as ${from2.podIP}:\n${log1}`);
  });

  test("a local-path claim of a pod on node 2 gets a volume on node 2, in node 2's own folder", TIMEOUT, async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } } },
    });
    const secret = randomBytes(8).toString('hex');
    const { pod } = await runToCompletion(
      podOn(
        node2,
        'writer',
        `${registry}/debian:bookworm`,
        ['sh', '-c', `echo ${secret} > /data/file && sync`],
        {
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
        { volumeMounts: [{ name: 'data', mountPath: '/data' }] },
      ),
    );
    assert.equal(pod.spec?.nodeName, node2);
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns });
    assert.equal(pvc.status?.phase, 'Bound');
    const pv = await core.readPersistentVolume({ name: pvc.spec!.volumeName! });
    const term = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0];
    assert.deepEqual([term?.key, term?.operator, term?.values], ['kubernetes.io/hostname', 'In', [node2]]);
    const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? '';
    const own = join(STATE, 'nodes', '2', 'local-path-pv');
    assert.ok(path.startsWith(`${own}/`), `the volume ${path} is under ${own}`);
    // The nodes share the host's disk: what the pod wrote is in that folder.
    assert.equal(readFileSync(join(path, 'file'), 'utf8').trim(), secret);
  });

  test('node 2 goes down (NotReady) and comes back with `up` (Ready, runs pods again)', TIMEOUT, async () => {
    stopComponent(node2);
    await waitFor('node 2 to be NotReady', async () => ((await nodeReady(node2)) !== 'True' ? true : undefined), 150_000);
    assert.equal(await nodeReady(node1), 'True', 'node 1 is not affected');
    restartCluster();
    await waitFor('node 2 to be Ready again', async () => ((await nodeReady(node2)) === 'True' ? true : undefined), 120_000);
    const { pod, log } = await runToCompletion(podOn(node2, 'after-restart', `${registry}/debian:bookworm`, ['echo', 'back']));
    assert.equal(pod.spec?.nodeName, node2);
    assert.equal(log.trim(), 'back');
  });
});
