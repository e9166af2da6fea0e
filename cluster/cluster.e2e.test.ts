/**
 * Smoke test of the local cluster (cluster/cluster.sh), through the Kubernetes API with
 * @kubernetes/client-node: workloads from locally built images, Services and DNS, exec,
 * port-forward, persistent volumes, service-account tokens, outbound traffic and the local
 * registry. Everything happens in a throwaway namespace, deleted at the end.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { crane, ensureCluster, waitFor } from './test-cluster.ts';

const ns = `devtool-smoke-${randomBytes(3).toString('hex')}`;
const TIMEOUT = { timeout: 240_000 };
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let registry: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pod(name: string, image: string, command: string[], extra: Partial<k8s.V1PodSpec> = {}, container: Partial<k8s.V1Container> = {}): k8s.V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, command, ...container }], ...extra },
  };
}

/** Runs a pod to completion; returns its log, failing with the log if it did not succeed. */
async function runToCompletion(p: k8s.V1Pod): Promise<string> {
  const name = p.metadata!.name!;
  await core.createNamespacedPod({ namespace: ns, body: p });
  const phase = await waitFor(`pod ${name} to finish`, async () => {
    const { status } = await core.readNamespacedPod({ name, namespace: ns });
    return status?.phase === 'Succeeded' || status?.phase === 'Failed' ? status.phase : undefined;
  });
  const log = await core.readNamespacedPodLog({ name, namespace: ns, container: 'main' });
  assert.equal(phase, 'Succeeded', `pod ${name} failed; log:\n${log}`);
  return log;
}

async function deletePodAndWait(name: string): Promise<void> {
  await core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 });
  await waitFor(`pod ${name} to be deleted`, async () => {
    try {
      await core.readNamespacedPod({ name, namespace: ns });
      return undefined;
    } catch (e) {
      if (e instanceof k8s.ApiException && e.code === 404) return true;
      throw e;
    }
  });
}

function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Exec through the API (websocket); resolves with output and exit code. */
async function execIn(podName: string, command: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const out = collector();
  const err = collector();
  const status = await new Promise<k8s.V1Status>((resolve, reject) => {
    new k8s.Exec(kc).exec(ns, podName, 'main', command, out.stream, err.stream, null, false, resolve).catch(reject);
  });
  let code = 0;
  if (status.status !== 'Success') {
    const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
    assert.ok(cause?.message, `exec failed without an exit code: ${JSON.stringify(status)}`);
    code = Number(cause.message);
  }
  await sleep(100); // let the last frames reach the collectors
  return { stdout: out.text(), stderr: err.text(), code };
}

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { connection: 'close' }, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

async function webPodName(): Promise<string> {
  const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
  const running = pods.items.find((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  assert.ok(running?.metadata?.name, 'a running web pod');
  return running.metadata.name;
}

describe('local cluster', () => {
  before(async () => {
    const cluster = await ensureCluster();
    registry = cluster.registry;
    kc = new k8s.KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);
    assert.equal(kc.getCurrentContext(), 'devtool-local');
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    // The default ServiceAccount appears shortly after the namespace; pods need it.
    await waitFor('the default ServiceAccount', async () => (await core.readNamespacedServiceAccount({ name: 'default', namespace: ns })).metadata?.name);
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                {
                  name: 'main',
                  image: `${registry}/nginx:1`,
                  ports: [{ containerPort: 80 }],
                  readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
    });
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 80 }] } },
    });
  });

  after(async () => {
    if (!core) return;
    await core.deleteNamespace({ name: ns }).catch(() => undefined);
    // The namespace controller deletes everything in it (and the PV through the provisioner).
    await waitFor(
      `namespace ${ns} to be deleted`,
      async () => {
        try {
          await core.readNamespace({ name: ns });
          return undefined;
        } catch (e) {
          return e instanceof k8s.ApiException && e.code === 404 ? true : undefined;
        }
      },
      120_000,
    ).catch((e: unknown) => console.error(`warning: ${String(e)}`));
  });

  test('the node is Ready', async () => {
    const nodes = await core.listNode();
    assert.equal(nodes.items.length, 1);
    const ready = nodes.items[0]!.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
  });

  test('a watch sees objects being created (lists and watches on etcd 3.4)', TIMEOUT, async () => {
    const seen: string[] = [];
    let abort: AbortController | undefined;
    const added = new Promise<void>((resolve, reject) => {
      new k8s.Watch(kc)
        .watch(
          `/api/v1/namespaces/${ns}/configmaps`,
          { labelSelector: 'smoke=watch' },
          (phase, obj: k8s.V1ConfigMap) => {
            seen.push(`${phase} ${obj.metadata?.name}`);
            if (seen.length === 2) resolve();
          },
          (err: unknown) => (err ? reject(err as Error) : undefined),
        )
        .then((controller) => (abort = controller), reject);
    });
    await waitFor('the watch to start', async () => abort, 30_000);
    for (const name of ['watched-1', 'watched-2']) {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels: { smoke: 'watch' } }, data: { k: 'v' } } });
    }
    try {
      await added;
    } finally {
      abort?.abort();
    }
    assert.deepEqual(seen, ['ADDED watched-1', 'ADDED watched-2']);
    const list = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'smoke=watch' });
    assert.deepEqual(list.items.map((c) => c.metadata?.name).sort(), ['watched-1', 'watched-2']);
  });

  test('a Deployment of a locally built image becomes Ready', TIMEOUT, async () => {
    await waitFor('deployment web to be ready', async () =>
      (await apps.readNamespacedDeployment({ name: 'web', namespace: ns })).status?.readyReplicas === 1 ? true : undefined,
    );
  });

  test('a Service answers on its ClusterIP from the node', TIMEOUT, async () => {
    const svc = await core.readNamespacedService({ name: 'web', namespace: ns });
    const { status, body } = await waitFor(
      'the web Service from the node',
      async () => {
        const r = await httpGet(`http://${svc.spec!.clusterIP}/`);
        return r.status === 200 ? r : undefined;
      },
      60_000,
    );
    assert.equal(status, 200);
    assert.match(body, /Welcome to nginx!/);
  });

  test('a pod resolves a Service by DNS name and gets an HTTP answer from it', TIMEOUT, async () => {
    const svc = await core.readNamespacedService({ name: 'web', namespace: ns });
    const script = `
      const dns = require('node:dns').promises;
      (async () => {
        const short = await dns.lookup('web');
        const full = await dns.lookup('web.${ns}.svc.cluster.local');
        const res = await fetch('http://web/');
        const body = await res.text();
        console.log(JSON.stringify({ short: short.address, full: full.address, status: res.status, nginx: body.includes('Welcome to nginx!') }));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const log = await runToCompletion(pod('dns-client', `${registry}/node:20`, ['node', '-e', script]));
    const result = JSON.parse(log.trim().split('\n').pop()!) as Record<string, unknown>;
    assert.deepEqual(result, { short: svc.spec!.clusterIP, full: svc.spec!.clusterIP, status: 200, nginx: true });
  });

  test('exec through the API returns output and the exit code', TIMEOUT, async () => {
    const name = await webPodName();
    const ok = await execIn(name, ['sh', '-c', 'echo hello from $(hostname)']);
    assert.deepEqual(ok, { stdout: `hello from ${name}\n`, stderr: '', code: 0 });
    const failed = await execIn(name, ['sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.deepEqual(failed, { stdout: 'out\n', stderr: 'err\n', code: 3 });
  });

  test('port-forward through the API reaches the pod', TIMEOUT, async () => {
    const name = await webPodName();
    const forward = new k8s.PortForward(kc);
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      forward.portForward(ns, name, [80], socket, null, socket).catch((e: unknown) => socket.destroy(e as Error));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const { status, body } = await httpGet(`http://127.0.0.1:${port}/`);
      assert.equal(status, 200);
      assert.match(body, /Welcome to nginx!/);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a PVC on the default StorageClass binds to the node of its first pod and keeps data across pods', TIMEOUT, async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } } },
    });
    const classes = await kc.makeApiClient(k8s.StorageV1Api).listStorageClass();
    const defaults = classes.items.filter((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
    assert.deepEqual(
      defaults.map((c) => [c.metadata?.name, c.provisioner, c.volumeBindingMode]),
      [['local-path', 'rancher.io/local-path', 'WaitForFirstConsumer']],
    );
    // The host-path class stays, not the default: root's 0750 folders, for the tests of storage that ignores fsGroup.
    assert.equal(classes.items.find((c) => c.metadata?.name === 'standard')?.provisioner, 'kubernetes.io/host-path');
    // WaitForFirstConsumer: no volume until a pod uses the claim.
    await sleep(2000);
    assert.equal((await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns })).status?.phase, 'Pending');
    const secret = randomBytes(8).toString('hex');
    const volume = { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] };
    const mount = { volumeMounts: [{ name: 'data', mountPath: '/data' }] };
    // A non-root writer, with no fsGroup: the provisioner's folders are 0777, as kind's, k3s's and minikube's are.
    const nonRoot = { securityContext: { runAsUser: 1000, runAsGroup: 1000 } };
    const written = await runToCompletion(
      pod('writer', `${registry}/debian:bookworm`, ['sh', '-c', `stat -c '%a %u' /data && echo ${secret} > /data/file && sync`], volume, {
        ...mount,
        ...nonRoot,
      }),
    );
    assert.equal(written.trim(), '777 0');
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns });
    assert.equal(pvc.spec?.storageClassName, 'local-path');
    assert.equal(pvc.status?.phase, 'Bound');
    // The volume is the node's: a later pod of the claim is scheduled there (node affinity), as on real clusters.
    const pv = await core.readPersistentVolume({ name: pvc.spec!.volumeName! });
    const writerNode = (await core.readNamespacedPod({ name: 'writer', namespace: ns })).spec?.nodeName;
    const term = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0];
    assert.deepEqual([term?.key, term?.operator, term?.values], ['kubernetes.io/hostname', 'In', [writerNode]]);
    await deletePodAndWait('writer');
    const log = await runToCompletion(pod('reader', `${registry}/debian:bookworm`, ['cat', '/data/file'], volume, mount));
    assert.equal(log.trim(), secret);
    // Reclaim policy Delete: the claim's deletion removes the volume (its folder goes with the provisioner's helper pod).
    await deletePodAndWait('reader');
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'data', namespace: ns });
    await waitFor(`volume ${pv.metadata?.name} deleted`, async () => {
      try {
        await core.readPersistentVolume({ name: pv.metadata!.name! });
        return undefined;
      } catch (e) {
        if (e instanceof k8s.ApiException && e.code === 404) return true;
        throw e;
      }
    });
  });

  test('pods authenticate to the API with their service-account token', TIMEOUT, async () => {
    const script = `
      const dir = '/var/run/secrets/kubernetes.io/serviceaccount/';
      const token = require('node:fs').readFileSync(dir + 'token', 'utf8');
      fetch('https://kubernetes.default.svc/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        method: 'POST',
        headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      }).then(async (r) => console.log(JSON.stringify({ status: r.status, user: (await r.json()).status?.userInfo?.username })))
        .catch((e) => { console.error(e); process.exit(1); });`;
    const log = await runToCompletion(
      pod(
        'sa-client',
        `${registry}/node:20`,
        ['node', '-e', script],
        {},
        { env: [{ name: 'NODE_EXTRA_CA_CERTS', value: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt' }] },
      ),
    );
    assert.deepEqual(JSON.parse(log.trim().split('\n').pop()!), { status: 201, user: `system:serviceaccount:${ns}:default` });
  });

  test('pods reach the Debian mirror and the npm registry', TIMEOUT, async () => {
    const script =
      `
      Promise.all(['http://deb.debian.org/debian/dists/bookworm/Release', 'https://registry.npmjs.org/yaml']` +
      `.map((u) => fetch(u, { method: 'HEAD' }).then((r) => r.status)))
        .then((s) => console.log(JSON.stringify(s))).catch((e) => { console.error(e); process.exit(1); });`;
    const log = await runToCompletion(pod('egress', `${registry}/node:20`, ['node', '-e', script]));
    assert.deepEqual(JSON.parse(log.trim().split('\n').pop()!), [200, 200]);
  });

  test('an image pushed to the local registry during the test runs', TIMEOUT, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devtool-smoke-'));
    try {
      const secret = randomBytes(8).toString('hex');
      writeFileSync(join(dir, 'hello.txt'), `${secret}\n`);
      const tar = spawnSync('tar', ['-cf', join(dir, 'layer.tar'), '-C', dir, 'hello.txt'], { encoding: 'utf8' });
      assert.equal(tar.status, 0, tar.stderr);
      const image = `${registry}/devtool-smoke:${secret}`;
      crane(['append', '--insecure', '-b', `${registry}/debian:bookworm`, '-f', join(dir, 'layer.tar'), '-t', image]);
      const log = await runToCompletion(pod('pushed', image, ['cat', '/hello.txt']));
      assert.equal(log.trim(), secret);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
