/**
 * Kubernetes credentials past their real expiry (slow: about 11 minutes, mostly waiting; in the
 * suite it runs beside the other files, see scripts/run-tests.mjs; alone, it needs
 * DEVTOOL_E2E_SLOW=1). The service issues 10-minute
 * tokens, Kubernetes' shortest; an `up` session started with the first token outlives it: after the
 * API server refuses that token, `up` still reconnects to a replaced dev pod, `exec` works, and
 * kubectl through the `devtool kubeconfig` entry works, each with a newer token.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster, REGISTRY } from '../../cluster/test-cluster.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';
import { createUser, type RunningService, startService } from './service.ts';
import { killUpSessions, startUp } from './up-session.ts';
import { waitFor } from './wait.ts';

const slow = process.env.DEVTOOL_E2E_SLOW === '1';
const run = randomBytes(3).toString('hex');
const serviceNs = `e2e-kexp-${run}`;
const user = `e2ekx${run}`;
const ns = `${user}-devtool`;
const tmp = mkdtempSync(join(tmpdir(), 'service-kube-expiry-'));

let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let service: RunningService;
let sb: Sandbox;
let ca: string;

const cached = () => {
  const dir = join(sb.devtoolHome, 'kube-credentials');
  const name = readdirSync(dir).find((f) => f.endsWith('.json'))!;
  return JSON.parse(readFileSync(join(dir, name), 'utf8')) as { token: string; expiresAt: string; server: string };
};

/** The API server's answer to a token: 200 while it is valid, 401 once expired. */
function statusWith(server: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${server}/api/v1/namespaces/${ns}/pods`, { ca, headers: { authorization: `Bearer ${token}` }, timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function kubectl(args: string[]) {
  const bin = '/var/cache/devtool-cluster/bin';
  const dir = readdirSync(bin).find((d) => d.startsWith('k8s-') && existsSync(join(bin, d, 'kubectl')))!;
  return spawnSync(join(bin, dir, 'kubectl'), args, { env: { PATH: process.env.PATH, HOME: sb.home, KUBECONFIG: sb.kubeconfig }, encoding: 'utf8' });
}

describe('kube credentials past their expiry', { skip: slow ? false : 'slow (11 min): set DEVTOOL_E2E_SLOW=1' }, () => {
  before(async () => {
    const { kubeconfigPath } = await ensureCluster();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: serviceNs, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
    const cluster = kc.getCurrentCluster()!;
    ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString() : readFileSync(cluster.caFile!, 'utf8');
    writeFileSync(join(tmp, 'ca.crt'), ca);
    // The service program started here, not the chart's installation: the test needs tokens of
    // Kubernetes' shortest lifetime (DEVTOOL_KUBE_TOKEN_SECONDS=600), and the chart leaves the
    // service's default of an hour (no value for it), which would make this test run over an hour.
    const env = {
      KUBECONFIG: kubeconfigPath,
      POD_NAMESPACE: serviceNs,
      DEVTOOL_OBJECT_LABELS: `${E2E_NAMESPACE_LABEL}=true`,
      DEVTOOL_REGISTRY: REGISTRY,
      DEVTOOL_KUBE_SERVER: cluster.server,
      DEVTOOL_KUBE_CA_FILE: join(tmp, 'ca.crt'),
      DEVTOOL_KUBE_TOKEN_SECONDS: '600',
    };
    service = await startService(env);
    const made = createUser(env, user);
    assert.equal(made.status, 0, made.stderr);
    sb = createSandbox();
    assert.equal(runDevtool(['context', 'use', service.url, '--token', made.token], { env: sb.env }).code, 0);
    assert.equal(runDevtool(['kubeconfig'], { env: sb.env }).code, 0);
  });

  after(async () => {
    killUpSessions();
    await service?.stop();
    rmSync(tmp, { recursive: true, force: true });
    for (const name of [ns, serviceNs]) await core?.deleteNamespace({ name }).catch(() => {});
  });

  test('an up session, exec and kubectl outlive the first token', { timeout: 1_200_000 }, async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'api' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: { containers: [{ name: 'api', image: `${REGISTRY}/node:20`, command: ['sleep', 'infinity'] }] },
          },
        },
      },
    });
    const folder = mkdtempSync(join(sb.root, 'project-'));
    writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api: {}\n');
    const session = await startUp([], { env: sb.env, cwd: folder });
    const first = cached();
    assert.equal(await statusWith(first.server, first.token), 200);

    // The API server accepts a token up to a minute past its exp (the JWT library's clock leeway).
    const wait = Date.parse(first.expiresAt) - Date.now() + 60_000;
    await new Promise((r) => setTimeout(r, wait));
    await waitFor('the API server refuses the first token', async () => (await statusWith(first.server, first.token)) === 401, 60_000);
    assert.equal(session.proc.exitCode, null, 'up is still running');

    // up's own client must reconnect with a new token: its dev pod is replaced under it.
    const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'devtool.dev/dev-pod=api' });
    for (const p of pods.items) await core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: ns });
    await waitFor(
      'exec works in the new dev pod',
      () => runDevtool(['exec', '--', 'true'], { env: sb.env, cwd: folder, timeoutMs: 30_000 }).code === 0,
      180_000,
    );
    assert.equal(session.proc.exitCode, null, 'up survived the expiry and the reconnect');
    assert.doesNotMatch(session.output(), /Unauthorized|401/);
    const k = kubectl(['get', 'pods', '-o', 'name']);
    assert.equal(k.status, 0, k.stderr);
    assert.notEqual(cached().token, first.token, 'a newer token is cached');
    await session.stop();
    assert.equal(runDevtool(['down'], { env: sb.env, cwd: folder, timeoutMs: 120_000 }).code, 0);
  });
});
