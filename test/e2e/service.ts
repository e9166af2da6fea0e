/**
 * The devtool service program as the tests run it: the built `dist/devtool-service.cjs`, `serve`
 * on a free loopback port, and its operator command `create-user`.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ensureBuilt, repoRoot } from './cli.ts';

export const servicePath = join(repoRoot, 'dist', 'devtool-service.cjs');

export interface RunningService {
  url: string;
  /** Everything it printed so far (its JSON log lines). */
  output(): string;
  /** SIGTERM; resolves to its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `serve` with `env` (POD_NAMESPACE, KUBECONFIG...) and waits until /readyz answers 200. */
export async function startService(env: Record<string, string>): Promise<RunningService> {
  ensureBuilt();
  const port = await freePort();
  const child = spawn(process.execPath, [servicePath, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (i >= 100 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`devtool-service serve not ready after 10 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** `create-user NAME [--admin]`; the result's `token` is its last output line. */
export function createUser(env: Record<string, string>, name: string, admin = false) {
  ensureBuilt();
  const r = spawnSync(process.execPath, [servicePath, 'create-user', name, ...(admin ? ['--admin'] : [])], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, token: r.stdout.trim().split('\n').pop() ?? '' };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The service's own ServiceAccount `devtool-service` in `namespace`, with exactly the rights the
 * chart grants it (docs/service-design.md, "What the service's ServiceAccount needs"), and a
 * KubeConfig acting as it (a 15-minute TokenRequest token), so a test runs the service with no more
 * than it has when installed.
 */
export async function serviceIdentity(kc: k8s.KubeConfig, namespace: string, labels: Record<string, string>): Promise<k8s.KubeConfig> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const meta = (name: string) => ({ name, labels });
  const subjects = [{ kind: 'ServiceAccount', name: 'devtool-service', namespace }];
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: meta('devtool-service') } });
  await rbac.createClusterRole({
    body: {
      metadata: meta(namespace),
      rules: [
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['get', 'create', 'delete'] },
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['admin', 'view'] },
        { apiGroups: [''], resources: ['resourcequotas', 'limitranges'], verbs: ['get', 'create', 'update', 'delete'] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: { metadata: meta(namespace), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: namespace }, subjects },
  });
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: meta('devtool-service'),
      rules: [
        { apiGroups: [''], resources: ['serviceaccounts', 'secrets'], verbs: ['get', 'list', 'create', 'update', 'delete', 'patch', 'deletecollection'] },
        { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: meta('devtool-service'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'devtool-service' }, subjects },
  });
  const tr = await core.createNamespacedServiceAccountToken({ name: 'devtool-service', namespace, body: { spec: { audiences: [], expirationSeconds: 900 } } });
  const cluster = kc.getCurrentCluster()!;
  const as = new k8s.KubeConfig();
  as.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'devtool-service', token: tr.status!.token }],
    contexts: [{ name: 'devtool-service', cluster: cluster.name, user: 'devtool-service' }],
    currentContext: 'devtool-service',
  });
  return as;
}
