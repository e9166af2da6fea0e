/**
 * Stored secrets in `deploy` and analytics, against the built service program (`serve`, as
 * service-context.e2e.test.ts runs it) on the local cluster: a user logs in with `context use URL
 * --token`, stores a secret through the API, and deploys a Compose app whose environment uses it;
 * the CLI's analytics records reach the service's /metrics.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { ServiceClient } from '../../src/service/client.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL, execInPod, REGISTRY, runningPod } from './cluster.ts';
import { createUser, type RunningService, startService } from './service.ts';

const run = randomBytes(3).toString('hex');
const serviceNs = `e2e-sec-${run}`;
const user = `e2esec${run}`;
const SECRET = `stored-${randomBytes(12).toString('hex')}`;
let kubeconfigText: string;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let service: RunningService;
let token: string;

const devtool = (sb: Sandbox, args: string[], opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) =>
  runDevtool(args, { env: { ...sb.env, ...opts.env }, ...(opts.cwd ? { cwd: opts.cwd } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
const logOf = (sb: Sandbox) => readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8');

/** A logged-in sandbox with a Compose app whose environment takes APP_SECRET. */
function loggedIn(): { sb: Sandbox; app: string } {
  const sb = createSandbox(kubeconfigText);
  const login = devtool(sb, ['context', 'use', service.url, '--token', token]);
  assert.equal(login.code, 0, login.stderr);
  const app = join(sb.root, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'compose.yaml'),
    `services:\n  web:\n    image: ${REGISTRY}/debian:bookworm\n    command: ["sleep", "infinity"]\n    environment:\n      APP_SECRET: \${APP_SECRET}\n`,
  );
  return { sb, app };
}

async function metrics(): Promise<string> {
  const res = await fetch(`${service.url}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

/** A loopback port nothing listens on (it was free a moment ago). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('stored secrets in deploy, and analytics, on a service context', () => {
  before(async () => {
    const { kubeconfigPath } = await ensureCluster();
    kubeconfigText = readFileSync(kubeconfigPath, 'utf8');
    kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: serviceNs, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
    // Cluster commands on the service context run with the user's own credentials, which the
    // service hands out (POST /kube-credentials): it needs the API server's URL and CA.
    const cluster = kc.getCurrentCluster()!;
    const caFile = join(mkdtempSync(join(tmpdir(), 'devtool-secrets-')), 'cluster-ca.crt');
    writeFileSync(caFile, cluster.caData ? Buffer.from(cluster.caData, 'base64') : readFileSync(cluster.caFile!));
    const env = {
      KUBECONFIG: kubeconfigPath,
      POD_NAMESPACE: serviceNs,
      DEVTOOL_OBJECT_LABELS: `${E2E_NAMESPACE_LABEL}=true`,
      DEVTOOL_REGISTRY: REGISTRY,
      DEVTOOL_KUBE_SERVER: cluster.server,
      DEVTOOL_KUBE_CA_FILE: caFile,
    };
    service = await startService(env);
    const made = createUser(env, user);
    assert.equal(made.status, 0, made.stderr);
    token = made.token;
    await new ServiceClient({ url: service.url, token }).putSecret('APP_SECRET', SECRET);
  });

  after(async () => {
    const output = service?.output() ?? '';
    await service?.stop();
    assert.equal(output.includes(SECRET), false, "the stored value is in the service's log");
    if (!core) return;
    for (const ns of (await core.listNamespace()).items) {
      const name = ns.metadata!.name!;
      if (name.includes(run)) await core.deleteNamespace({ name }).catch(() => {});
    }
  });

  test('deploy --dry-run shows a placeholder for a stored secret, never its value', () => {
    const { sb, app } = loggedIn();
    const r = devtool(sb, ['deploy', '--dry-run'], { cwd: app });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /value: <stored secret APP_SECRET>/);
    for (const text of [r.stdout, r.stderr, logOf(sb)]) assert.equal(text.includes(SECRET), false, 'the stored value was printed or logged');
    // The shell sets it: the service is not asked, and the shell's value is what deploy would use.
    const shell = devtool(sb, ['deploy', '--dry-run'], { cwd: app, env: { APP_SECRET: 'from-the-shell' } });
    assert.equal(shell.code, 0, shell.stderr);
    assert.match(shell.stdout, /value: from-the-shell/);
  });

  test('an unreachable service: one line naming the variable, nothing rendered', async () => {
    const { sb, app } = loggedIn();
    const gone = `http://127.0.0.1:${await closedPort()}`;
    const contexts = join(sb.devtoolHome, 'contexts.json');
    const data = JSON.parse(readFileSync(contexts, 'utf8')) as { current: string; contexts: Record<string, { name: string }> };
    data.contexts[gone] = { ...data.contexts[data.current]!, name: gone };
    data.current = gone;
    writeFileSync(contexts, JSON.stringify(data), { mode: 0o600 });
    const r = devtool(sb, ['deploy', '--dry-run'], { cwd: app });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'Error: ${APP_SECRET} is set by neither the shell nor .env, and the stored secrets cannot be read: ' +
        `cannot reach the devtool service at ${gone}: nothing listens there (ECONNREFUSED)\n`,
    );
  });

  test('deploy fills ${APP_SECRET} from stored secrets into the running container; .env, then the shell, override it', { timeout: 600_000 }, async () => {
    const { sb, app } = loggedIn();
    const namespace = `${user}-devtool`;
    const deploy = (env: Record<string, string> = {}) =>
      devtool(sb, ['deploy', '--name', 'sec', '--wait', '--timeout', '3m'], { cwd: app, env, timeoutMs: 240_000 });
    const seen = async () => {
      const pod = await runningPod(core, namespace, 'devtool.dev/service=web');
      return (await execInPod(kc, namespace, pod, ['printenv', 'APP_SECRET'])).stdout.trim();
    };
    const r = deploy();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await seen(), SECRET);
    for (const text of [r.stdout, r.stderr, logOf(sb)]) assert.equal(text.includes(SECRET), false, 'the stored value was printed or logged');
    writeFileSync(join(app, '.env'), 'APP_SECRET=from-dotenv\n');
    assert.equal(deploy().code, 0);
    assert.equal(await seen(), 'from-dotenv');
    assert.equal(deploy({ APP_SECRET: 'from-shell' }).code, 0);
    assert.equal(await seen(), 'from-shell');
    rmSync(join(app, '.env'));
  });

  test("the CLI's analytics records reach the service's /metrics after a few commands", async () => {
    const { sb } = loggedIn();
    const before = await metrics();
    const versionBefore = sample(before, 'devtool_analytics_records_total{action="version",success="true"}') ?? 0;
    // A batch is due at 10 records: `context use` and 9 more commands.
    for (let i = 0; i < 9; i++) assert.equal(devtool(sb, ['version']).code, 0);
    const after = await metrics();
    assert.equal(sample(after, 'devtool_analytics_records_total{action="version",success="true"}'), versionBefore + 9);
    assert.ok((sample(after, 'devtool_analytics_records_total{action="context use",success="true"}') ?? 0) >= 1);
    assert.ok((sample(after, 'devtool_http_requests_total{route="/api/v1/analytics",method="POST",status="202"}') ?? 0) >= 1);
    assert.equal(after.includes(token), false, 'a token in the metrics');
    // Disabled: the next batch is never sent.
    assert.equal(devtool(sb, ['analytics', '--disable']).code, 0);
    for (let i = 0; i < 10; i++) assert.equal(devtool(sb, ['version']).code, 0);
    assert.equal(sample(await metrics(), 'devtool_analytics_records_total{action="version",success="true"}'), versionBefore + 9);
  });
});
