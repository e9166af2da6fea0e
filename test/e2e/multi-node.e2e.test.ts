/**
 * `up` and `down` on a local cluster of two nodes (cluster/lib/nodes.sh), where the workload does
 * not run on the node devtool's machine is: a Deployment whose pod runs on node 2 (the dev pod
 * follows it there: its agent, the sync and exec go through node 2's kubelet), and a StatefulSet
 * whose claim is bound to node 2 (the dev pod lands where the claim is, though nothing else pins
 * it). The second node is added in `before` and removed in `after`, whatever happened.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { runDevtool } from './cli.ts';
import { installedService, whenAnswering } from './installed-service.ts';
import { killUpSessions, startUp } from './up-session.ts';
import { waitFor } from './wait.ts';
import { clusterSandbox, ensureAgentImage, ensureNodes, execInPod, nodeName, REGISTRY, type ClusterSandbox } from './cluster.ts';

const node2 = nodeName(2);
let s: ClusterSandbox | undefined;
let apps: k8s.AppsV1Api;
let folder: string;
let env: NodeJS.ProcessEnv;

const server = "require('http').createServer((q,r)=>r.end('original')).listen(8080)";
const onNode2 = { nodeSelector: { 'kubernetes.io/hostname': node2 } };

before(async () => {
  await ensureNodes(2);
  s = await clusterSandbox('multi-node');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'devtool.yml'),
    'services:\n  web:\n    sync: [".:/src"]\n  db:\n    sync: [".:/src"]\n' +
      // Drained under `up` (below): api keeps its files on a claim of its own, worker in an emptyDir.
      '  api:\n    sync: [".:/src"]\n  worker:\n    sync: [".:/src"]\n    persistentVolume: {enabled: false}\n',
  );
  writeFileSync(join(folder, 'main.js'), 'one\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(async () => {
  killUpSessions();
  try {
    if (s) {
      const sandbox = s;
      runDevtool(['down', '-n', sandbox.namespace, '--volumes'], { env, cwd: folder, timeoutMs: 120_000 });
      // Node 2's pods stop, and its volumes' folders go (helper pods on node 2), before node 2 goes.
      await sandbox.core.deleteNamespace({ name: sandbox.namespace }).catch(() => undefined);
      await waitFor(
        `namespace ${sandbox.namespace} deleted with its volumes`,
        async () => {
          const left = (await sandbox.core.listPersistentVolume()).items.some((pv) => pv.spec?.claimRef?.namespace === sandbox.namespace);
          return (
            !left &&
            (await sandbox.core.readNamespace({ name: sandbox.namespace }).then(
              () => false,
              () => true,
            ))
          );
        },
        150_000,
      ).catch((e: unknown) => console.error(`warning: ${String(e)}`));
    }
  } finally {
    await ensureNodes(1);
  }
});

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s!.namespace, ...args], { env, cwd: folder, timeoutMs });
const ok = (cond: () => Promise<boolean>) => () => cond().catch(() => false);

/** The node of the running pod whose name starts with `prefix` (an original's: not its dev pod, unless the prefix names it). */
async function nodeOfPod(prefix: string): Promise<string | undefined> {
  const pods = await s!.core.listNamespacedPod({ namespace: s!.namespace });
  const ours = (name: string) => name.startsWith(prefix) && (prefix.includes('-devtool') || !name.includes('-devtool'));
  const pod = pods.items.find((p) => ours(p.metadata?.name ?? '') && p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  return pod?.spec?.nodeName;
}

test('up on a Deployment whose pod runs on node 2: the dev pod runs there, ready, an edit syncs; down restores it', { timeout: 420_000 }, async () => {
  const { namespace } = s!;
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            ...onNode2,
            containers: [{ name: 'web', image: `${REGISTRY}/node:20`, command: ['node', '-e', server], readinessProbe: { tcpSocket: { port: 8080 } } }],
          },
        },
      },
    },
  });
  await waitFor(
    'deployment web ready',
    ok(async () => (await apps.readNamespacedDeployment({ name: 'web', namespace })).status?.readyReplicas === 1),
    180_000,
  );
  assert.equal(await nodeOfPod('web-'), node2);
  const before_ = await apps.readNamespacedDeployment({ name: 'web', namespace });

  const up = await startUp(['web', '-n', namespace], { env, cwd: folder });
  assert.match(up.output(), /dev container web-devtool is ready/);
  assert.equal(await nodeOfPod('web-devtool-'), node2, 'the dev pod runs on the node of the original');
  const first = dev(['exec', 'web', '--', 'cat', '/src/main.js']);
  assert.equal(first.stdout, 'one\n', first.stderr);
  writeFileSync(join(folder, 'main.js'), 'two\n');
  await waitFor('the local edit in the dev container on node 2', () => dev(['exec', 'web', '--', 'cat', '/src/main.js']).stdout === 'two\n', 60_000);

  const down = dev(['down', 'web'], 180_000);
  assert.equal(down.code, 0, down.stderr);
  await up.stop();
  const restored = await apps.readNamespacedDeployment({ name: 'web', namespace });
  assert.equal(restored.spec?.replicas, before_.spec?.replicas);
  assert.equal(restored.metadata?.annotations?.['devtool.dev/dev-folder'], undefined);
  await assert.rejects(apps.readNamespacedDeployment({ name: 'web-devtool', namespace }));
  await waitFor(
    'deployment web ready again',
    ok(async () => (await apps.readNamespacedDeployment({ name: 'web', namespace })).status?.readyReplicas === 1),
    180_000,
  );
  assert.equal(await nodeOfPod('web-'), node2);
});

test('up on a StatefulSet whose claim is bound to node 2: the dev pod lands where the claim is, with its data', { timeout: 420_000 }, async () => {
  const { namespace, core, kc } = s!;
  // The claim pod-0 will use, bound to node 2 by a first pod there (WaitForFirstConsumer), which wrote into it.
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: { metadata: { name: 'data-db-0', labels: { app: 'db' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } },
  });
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: 'seed' },
      spec: {
        ...onNode2,
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'seed',
            image: `${REGISTRY}/debian:bookworm`,
            command: ['sh', '-c', 'echo seeded on node 2 > /data/hello.txt'],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }],
      },
    },
  });
  await waitFor(
    'the seed pod done',
    ok(async () => (await core.readNamespacedPod({ name: 'seed', namespace })).status?.phase === 'Succeeded'),
    180_000,
  );
  await core.deleteNamespacedPod({ name: 'seed', namespace, gracePeriodSeconds: 0 });
  const claim = await core.readNamespacedPersistentVolumeClaim({ name: 'data-db-0', namespace });
  const pv = await core.readPersistentVolume({ name: claim.spec!.volumeName! });
  assert.deepEqual(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values, [node2]);

  // The StatefulSet names no node: its pod-0 goes where its claim is.
  await apps.createNamespacedStatefulSet({
    namespace,
    body: {
      metadata: { name: 'db', labels: { app: 'db' } },
      spec: {
        replicas: 1,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              { name: 'app', image: `${REGISTRY}/debian:bookworm`, command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] },
            ],
          },
        },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } }],
      },
    },
  });
  await waitFor(
    'statefulset db ready',
    ok(async () => (await apps.readNamespacedStatefulSet({ name: 'db', namespace })).status?.readyReplicas === 1),
    180_000,
  );
  assert.equal(await nodeOfPod('db-0'), node2);

  const up = await startUp(['db', '-n', namespace], { env, cwd: folder });
  assert.match(up.output(), /dev container db-devtool is ready/);
  assert.equal(await nodeOfPod('db-devtool-'), node2, 'the dev pod runs where its claim is');
  const data = dev(['exec', 'db', '--', 'cat', '/data/hello.txt', '/src/main.js']);
  assert.equal(data.code, 0, data.stderr);
  assert.match(data.stdout, /^seeded on node 2\n/);

  const down = dev(['down', 'db'], 180_000);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stderr, /statefulset db restored to 1 replica$/m);
  await up.stop();
  await waitFor(
    'statefulset db ready again',
    ok(async () => (await apps.readNamespacedStatefulSet({ name: 'db', namespace })).status?.readyReplicas === 1),
    180_000,
  );
  assert.equal(await nodeOfPod('db-0'), node2);
  const back = await execInPod(kc, namespace, 'db-0', ['cat', '/data/hello.txt']);
  assert.equal(back.stdout, 'seeded on node 2\n', back.stderr);
});

test("the front door answers on every node: the service URL through node 2's address", { timeout: 300_000 }, async () => {
  const svc = await installedService();
  const { core } = s!;
  const node = await core.readNode({ name: node2 });
  const address = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  assert.ok(address, `${node2} has an InternalIP`);
  const onNode2Ready = async () =>
    (await core.listNamespacedPod({ namespace: 'devtool', labelSelector: 'app.kubernetes.io/component=front-door' })).items.some(
      (p) => p.spec?.nodeName === node2 && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    );
  await waitFor(`a ready front door on ${node2}`, ok(onNode2Ready), 180_000);
  await whenAnswering(`${svc.url}/healthz`, svc.caPem, 60_000, address);
  // Both nodes' addresses on the service's Ingress, written by one front door.
  const net = svc.kc.makeApiClient(k8s.NetworkingV1Api);
  const node1 = await core.readNode({ name: nodeName(1) });
  const address1 = node1.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  await waitFor(
    "the service Ingress's status lists both nodes",
    ok(async () => {
      const ing = await net.readNamespacedIngress({ name: 'devtool-service', namespace: 'devtool' });
      const ips = (ing.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).sort();
      return JSON.stringify(ips) === JSON.stringify([address1, address].sort());
    }),
    60_000,
  );
});

const asMergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** Whether the pod is a DaemonSet's or a static pod's mirror: `kubectl drain` leaves both where they are. */
const drainSkips = (p: k8s.V1Pod) =>
  (p.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet') || p.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined;

/**
 * `kubectl drain NODE --ignore-daemonsets --delete-emptydir-data`, through the API as kubectl does
 * it: cordon (spec.unschedulable), then the Eviction API for each pod but DaemonSets' (retried while
 * a disruption budget says 429), then wait until those pods are gone.
 */
async function drain(node: string): Promise<void> {
  const { core } = s!;
  await core.patchNode({ name: node, body: { spec: { unschedulable: true } } }, asMergePatch);
  const onNode = async () =>
    (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items.filter(
      (p) => !drainSkips(p) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
    );
  for (const p of await onNode()) {
    const name = p.metadata!.name!;
    const namespace = p.metadata!.namespace!;
    await waitFor(
      `eviction of pod ${namespace}/${name}`,
      async () => {
        try {
          await core.createNamespacedPodEviction({ name, namespace, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } } });
          return true;
        } catch (e) {
          const code = (e as { code?: number }).code;
          if (code === 404) return true;
          if (code === 429) return false;
          throw e;
        }
      },
      60_000,
    );
  }
  await waitFor(`${node} drained`, async () => (await onNode()).length === 0, 120_000);
}

async function uncordon(node: string): Promise<void> {
  await s!.core.patchNode({ name: node, body: { spec: { unschedulable: false } } }, asMergePatch);
}

/** A Deployment whose pod prefers node 2 (preferred, not required: its dev pod may move once node 2 is drained). */
async function deploymentPreferringNode2(name: string): Promise<void> {
  const { namespace } = s!;
  const prefersNode2: k8s.V1Affinity = {
    nodeAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, preference: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node2] }] } },
      ],
    },
  };
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name, labels: { app: name } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            affinity: prefersNode2,
            terminationGracePeriodSeconds: 1,
            containers: [{ name, image: `${REGISTRY}/node:20`, command: ['node', '-e', server], readinessProbe: { tcpSocket: { port: 8080 } } }],
          },
        },
      },
    },
  });
  await waitFor(
    `deployment ${name} ready`,
    ok(async () => (await apps.readNamespacedDeployment({ name, namespace })).status?.readyReplicas === 1),
    180_000,
  );
  assert.equal(await nodeOfPod(`${name}-`), node2);
}

/**
 * Node 2 drained under a running `up`: the dev pod moves to node 1, `up` says so in one line and
 * reconnects, a file made in the container before the drain and an edit made here while the pod
 * moved are in the new dev pod, and an edit syncs both ways there; `down` restores the original.
 */
async function drainUnderUp(t: TestContext, name: string, said: RegExp): Promise<void> {
  const { namespace } = s!;
  await deploymentPreferringNode2(name);
  const file = `${name}-drain.txt`;
  writeFileSync(join(folder, file), 'before the drain\n');
  const up = await startUp([name, '-n', namespace], { env, cwd: folder });
  try {
    assert.match(up.output(), new RegExp(`dev container ${name}-devtool is ready`));
    assert.equal(await nodeOfPod(`${name}-devtool-`), node2, 'the dev pod runs on node 2 first');
    // Made in the container and synced here before the drain: this machine has it, so it is not lost.
    const made = dev(['exec', name, '--', 'sh', '-c', `echo made in the container > /src/${name}-made.txt`]);
    assert.equal(made.code, 0, made.stderr);
    await waitFor(`${name}-made.txt synced here`, () => existsSync(join(folder, `${name}-made.txt`)), 60_000);
    const before_ = up.output().length;
    // The dev container's own volume, if it has one: bound to node 2 (local-path).
    const claim = await s!.core.readNamespacedPersistentVolumeClaim({ name: `${name}-devtool`, namespace }).catch(() => undefined);
    const oldVolume = claim?.spec?.volumeName;

    await drain(node2);
    // Edited here while the dev pod moves.
    writeFileSync(join(folder, file), 'edited while the pod moved\n');
    await waitFor('up reconnected to the new dev pod', () => up.output().slice(before_).includes('reconnected to the dev container'), 240_000).catch(() =>
      assert.fail(`up after the drain:\n${up.output().slice(before_)}`),
    );
    const after_ = up.output().slice(before_);
    t.diagnostic(`up after the drain:\n${after_}`);
    assert.match(after_, said, after_);
    assert.match(after_, new RegExp(`reconnected to the dev container \\(pod ${name}-devtool-\\S+ on node ${nodeName(1)}\\)`), after_);
    assert.equal(await nodeOfPod(`${name}-devtool-`), nodeName(1), 'the new dev pod runs on node 1');
    await waitFor(
      'the edit made while the pod moved, in the new dev pod',
      () => dev(['exec', name, '--', 'cat', `/src/${file}`]).stdout === 'edited while the pod moved\n',
      90_000,
    ).catch(() => assert.fail(`up after the drain:\n${up.output().slice(before_)}`));
    const there = dev(['exec', name, '--', 'cat', `/src/${name}-made.txt`, '/src/main.js']);
    assert.equal(there.code, 0, there.stderr);
    assert.equal(there.stdout, `made in the container\n${readFileSync(join(folder, 'main.js'), 'utf8')}`);
    // Both ways on node 1.
    writeFileSync(join(folder, file), 'edited here on node 1\n');
    await waitFor(
      'the local edit in the dev pod on node 1',
      () => dev(['exec', name, '--', 'cat', `/src/${file}`]).stdout === 'edited here on node 1\n',
      60_000,
    );
    const back = dev(['exec', name, '--', 'sh', '-c', `echo edited there on node 1 > /src/${file}`]);
    assert.equal(back.code, 0, back.stderr);
    await waitFor('the edit in the dev pod on node 1, here', () => readFileSync(join(folder, file), 'utf8') === 'edited there on node 1\n', 60_000);

    const down = dev(['down', name], 180_000);
    assert.equal(down.code, 0, down.stderr);
    await up.stop();
    await assert.rejects(apps.readNamespacedDeployment({ name: `${name}-devtool`, namespace }));
    await waitFor(
      `deployment ${name} ready again`,
      ok(async () => (await apps.readNamespacedDeployment({ name, namespace })).status?.readyReplicas === 1),
      180_000,
    );
    if (oldVolume) {
      // Kept aside with what only it held, not deleted with its claim; the test then deletes it.
      const pv = await s!.core.readPersistentVolume({ name: oldVolume });
      assert.equal(pv.spec?.persistentVolumeReclaimPolicy, 'Retain');
      assert.match(after_, new RegExp(`kept as volume ${oldVolume} on ${node2}`));
      await s!.core.deletePersistentVolume({ name: oldVolume });
    }
  } finally {
    await up.stop();
    await uncordon(node2);
  }
}

test("node 2 drained under up, the dev pod's own claim there: a new claim on node 1, filled from this folder", { timeout: 600_000 }, async (t) => {
  await drainUnderUp(t, 'api', new RegExp(`dev volume of api was on node ${node2}, which is drained: a new one on another node, filled from this folder`));
});

test('node 2 drained under up, the dev pod on an emptyDir: it reconnects on node 1, nothing lost', { timeout: 600_000 }, async (t) => {
  await drainUnderUp(t, 'worker', /reconnected to the dev container/);
});
