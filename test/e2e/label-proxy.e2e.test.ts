/**
 * The labelling proxy end to end, behind a gateway that serves the cluster under a path
 * prefix, as Rancher does (https://rancher.example/k8s/clusters/c-abc): `kubectl proxy
 * --api-prefix` plays the gateway in front of the local cluster. `deploy` runs kubectl through the
 * labelling proxy; its requests must reach the API under the prefix, and what it creates carries
 * the environment label. (That no request path names another server: src/deploy/label-proxy.test.ts.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, type ClusterSandbox } from './cluster.ts';

const PREFIX = '/k8s/clusters/c-abc';
let s: ClusterSandbox;
let gateway: ChildProcess | undefined;
let gatewayKubeconfig: string;

before(async () => {
  s = await clusterSandbox('e2e-prefix');
  gateway = spawn('kubectl', ['--kubeconfig', s.cluster.kubeconfigPath, 'proxy', '--port=0', `--api-prefix=${PREFIX}/`], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    gateway!.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    gateway!.on('exit', (code) => reject(new Error(`kubectl proxy exited (${code}): ${out}`)));
  });
  // What a Rancher user has: a server URL with a path, the credentials on the gateway's side.
  gatewayKubeconfig = join(s.root, 'gateway.kubeconfig');
  writeFileSync(
    gatewayKubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'rancher', cluster: { server: `http://127.0.0.1:${port}${PREFIX}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'me', user: {} }],
      contexts: [{ name: 'rancher', context: { cluster: 'rancher', user: 'me', namespace: s.namespace } }],
      'current-context': 'rancher',
    }),
    { mode: 0o600 },
  );
});

after(async () => {
  gateway?.kill();
  if (s) await deleteNamespace(s);
});

test('deploy through the labelling proxy to an API server under a path prefix', { timeout: 240_000 }, async () => {
  const project = mkdtempSync(join(tmpdir(), 'devtool-prefix-'));
  writeFileSync(join(project, 'devtool.yml'), 'deploy:\n  - kubectl create configmap behind-gateway --from-literal=mode=prefixed\n');
  const r = runDevtool(['deploy', '--name', 'gateway-app', '--namespace', s.namespace], {
    cwd: project,
    env: { ...s.env, KUBECONFIG: gatewayKubeconfig },
    timeoutMs: 200_000,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /configmap\/behind-gateway created/);
  const cm = await s.core.readNamespacedConfigMap({ name: 'behind-gateway', namespace: s.namespace });
  assert.equal(cm.metadata?.labels?.['devtool.dev/environment'], 'gateway-app');
  assert.equal(cm.data?.['mode'], 'prefixed');
});
