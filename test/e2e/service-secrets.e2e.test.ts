/**
 * Stored secrets in `deploy` and analytics, on the service its chart installed (installed-service.ts),
 * reached through the front door: a user logs in with `context use https://devtool.devtool.test
 * --token` (trusting the front door's CA with DEVTOOL_CA_CERT, as a user does), stores a secret
 * through the API, and deploys a Compose app whose environment uses it with the user's own
 * credentials; the app's endpoint answers over HTTPS through the front door; the CLI's analytics
 * records reach the service replicas' /metrics. The stored value is in no output, no devtool.log and
 * no log line of the service's pods.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ServiceClient } from '../../src/service/client.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { execInPod, REGISTRY, runningPod } from './cluster.ts';
import { type InstalledService, installedService, SERVICE_NAMESPACE, whenAnswering, servicePods } from './installed-service.ts';

const run = randomBytes(3).toString('hex');
const user = `e2esec${run}`;
const SECRET = `stored-${randomBytes(12).toString('hex')}`;
const started = Date.now();
let svc: InstalledService;
let token: string;

const devtool = (sb: Sandbox, args: string[], opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) =>
  runDevtool(args, { env: { ...sb.env, ...opts.env }, ...(opts.cwd ? { cwd: opts.cwd } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
const logOf = (sb: Sandbox) => readFileSync(join(sb.devtoolHome, 'devtool.log'), 'utf8');

/** A logged-in sandbox with a Compose app whose environment takes APP_SECRET. */
function loggedIn(): { sb: Sandbox; app: string } {
  // No cluster credentials of its own (the sandbox's kubeconfig names only fake clusters): deploy
  // runs with those the service hands this user.
  const sb = createSandbox();
  const login = devtool(sb, ['context', 'use', svc.url, '--token', token], { env: { DEVTOOL_CA_CERT: svc.caFile } });
  assert.equal(login.code, 0, login.stderr);
  const app = join(sb.root, 'app');
  mkdirSync(app);
  // nginx with a public port: its page says which deploy it is; the secret is only in its environment.
  writeFileSync(
    join(app, 'compose.yaml'),
    [
      'services:',
      '  web:',
      `    image: ${REGISTRY}/nginx:1`,
      '    ports: ["8080:80"]',
      '    entrypoint: ["/bin/sh", "-c"]',
      `    command: ["echo \\"secrets page ${run}\\" > /usr/share/nginx/html/index.html && exec nginx -g 'daemon off;'"]`,
      '    environment:',
      '      APP_SECRET: ${APP_SECRET}',
      '',
    ].join('\n'),
  );
  return { sb, app };
}

/**
 * /metrics of every replica, read from each pod (the Service would answer from either one, and
 * each counts only what it received) with the scraper token service:up set, keyed by pod uid.
 */
async function metricsByPod(): Promise<Map<string, string>> {
  const secret = await svc.core.readNamespacedSecret({ name: 'devtool-service-metrics', namespace: SERVICE_NAMESPACE });
  const scraper = Buffer.from(secret.data?.['token'] ?? '', 'base64').toString('utf8');
  const byPod = new Map<string, string>();
  for (const pod of await servicePods(svc.core)) {
    const res = await fetch(`http://${pod.ip}:8080/metrics`, { headers: { authorization: `Bearer ${scraper}` } });
    assert.equal(res.status, 200, `/metrics of ${pod.name}`);
    byPod.set(pod.uid, await res.text());
  }
  return byPod;
}

/** A sample summed over the replicas. */
const total = (byPod: Map<string, string>, line: string) => [...byPod.values()].reduce((sum, text) => sum + (sample(text, line) ?? 0), 0);

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

describe('stored secrets in deploy, and analytics, on a service context of the installed service', () => {
  before(async () => {
    svc = await installedService();
    token = await svc.createUser(user);
    await new ServiceClient({ url: svc.url, token, ca: svc.caPem }).call('putSecret', { params: { name: 'APP_SECRET' }, body: { value: SECRET } });
  });

  after(async () => {
    await svc?.removeUsers();
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

  test('deploy fills ${APP_SECRET} from stored secrets into the running container; its endpoint answers over HTTPS; .env, then the shell, override it', {
    timeout: 600_000,
  }, async () => {
    const { sb, app } = loggedIn();
    const namespace = `${user}-devtool`;
    const deploy = (env: Record<string, string> = {}) =>
      devtool(sb, ['deploy', '--name', 'sec', '--wait', '--timeout', '3m'], { cwd: app, env, timeoutMs: 240_000 });
    const seen = async () => {
      const pod = await runningPod(svc.core, namespace, 'devtool.dev/service=web');
      return (await execInPod(svc.kc, namespace, pod, ['printenv', 'APP_SECRET'])).stdout.trim();
    };
    const r = deploy();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await seen(), SECRET);
    for (const text of [r.stdout, r.stderr, logOf(sb)]) assert.equal(text.includes(SECRET), false, 'the stored value was printed or logged');
    // The endpoint `devtool endpoints` prints answers through the front door, trusting its CA only.
    const e = devtool(sb, ['endpoints', '--name', 'sec', '--output', 'json']);
    assert.equal(e.code, 0, e.stderr);
    const endpoint = `https://web-${namespace}.devtool.test`;
    assert.deepEqual(JSON.parse(e.stdout), [endpoint]);
    const last = await whenAnswering(endpoint, svc.caPem);
    assert.equal(last.body, `secrets page ${run}\n`);
    writeFileSync(join(app, '.env'), 'APP_SECRET=from-dotenv\n');
    assert.equal(deploy().code, 0);
    assert.equal(await seen(), 'from-dotenv');
    assert.equal(deploy({ APP_SECRET: 'from-shell' }).code, 0);
    assert.equal(await seen(), 'from-shell');
    rmSync(join(app, '.env'));
  });

  test("the CLI's analytics records reach the replicas' /metrics after a few commands", async () => {
    const { sb } = loggedIn();
    const VERSION = 'devtool_analytics_records_total{action="version",success="true"}';
    const CONTEXT_USE = 'devtool_analytics_records_total{action="context use",success="true"}';
    const POSTED = 'devtool_http_requests_total{route="/api/v1/analytics",method="POST",status="202"}';
    // Counters live in each replica's memory: the sums below compare the same pods (a rollout, e.g.
    // another service:up on this machine with another build, would start new ones at zero). Other
    // CLIs sending analytics to this service meanwhile would make the counts differ too.
    const before = await metricsByPod();
    const samePods = async (now: Map<string, string>) =>
      assert.deepEqual([...now.keys()].sort(), [...before.keys()].sort(), 'the service pods changed during the test (a rollout?): rerun it');
    // A batch is due at 10 records: `context use` (in loggedIn) and 9 more commands.
    for (let i = 0; i < 9; i++) assert.equal(devtool(sb, ['version']).code, 0);
    const after = await metricsByPod();
    await samePods(after);
    assert.equal(total(after, VERSION), total(before, VERSION) + 9);
    assert.ok(total(after, CONTEXT_USE) >= total(before, CONTEXT_USE) + 1, 'the login was counted');
    assert.ok(total(after, POSTED) >= total(before, POSTED) + 1, 'a batch was posted');
    assert.equal([...after.values()].join('\n').includes(token), false, 'a token in the metrics');
    // Disabled: the next batch is never sent.
    assert.equal(devtool(sb, ['analytics', '--disable']).code, 0);
    for (let i = 0; i < 10; i++) assert.equal(devtool(sb, ['version']).code, 0);
    const disabled = await metricsByPod();
    await samePods(disabled);
    assert.equal(total(disabled, VERSION), total(before, VERSION) + 9);
  });

  test("the stored value is in no log line of the service's pods", async () => {
    const pods = await servicePods(svc.core);
    assert.ok(pods.length >= 1);
    const sinceSeconds = Math.ceil((Date.now() - started) / 1000) + 5;
    let all = '';
    for (const pod of pods) {
      const log = await svc.core.readNamespacedPodLog({ name: pod.name, namespace: SERVICE_NAMESPACE, container: 'service', sinceSeconds });
      assert.equal(log.includes(SECRET), false, `the stored value is in the log of ${pod.name}`);
      all += log;
    }
    // The logs read are those of this test's requests (a replica may have served none of them).
    assert.match(all, /"msg":"incoming request"/);
    assert.match(all, /\/api\/v1\/secrets/);
  });
});
