/**
 * Cluster access on a service context, end to end, on the service its chart installed
 * (installed-service.ts): it runs as the chart's least-rights ServiceAccount and hands out
 * short-lived tokens of each user's own ServiceAccount. Two users (A an admin, B not) log in with
 * `context use https://devtool.devtool.test --token` through the front door, trusting its CA with
 * DEVTOOL_CA_CERT on the first login as a user does; namespaces are created, listed and deleted
 * through the service; B can reach nothing of A's, neither through devtool (each refusal one line:
 * what, to whom, what to do) nor through kubectl with the kubeconfig `devtool kubeconfig` wrote; A deploys a Compose app with its own credentials and
 * its endpoint answers over HTTPS through the front door; the kubectl credential plugin fetches a
 * new token when the cached one is gone or expired.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { REGISTRY } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool, type Sandbox } from './cli.ts';
import { type InstalledService, installedService, kubectlAs, SERVICE_NAMESPACE, serviceCall, whenAnswering } from './installed-service.ts';
import { killUpSessions, startUp } from './up-session.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const userA = `e2eka${run}`;
const userB = `e2ekb${run}`;
const userC = `e2ekc${run}`;
const shop = `shop-${run}`;

let svc: InstalledService;
let url: string;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let a: Sandbox;
let tokenA: string;
let b: Sandbox;
let tokenB: string;

const devtool = (sb: Sandbox, args: string[], opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) =>
  runDevtool(args, { env: { ...sb.env, ...opts.env }, ...(opts.cwd ? { cwd: opts.cwd } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });

const kubectl = (sb: Sandbox, args: string[]) => kubectlAs(sb, args);

/** GET of a path of the service through the front door with this Accept header: status, content type, body. */
function getWithAccept(path: string, accept: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { ca: svc.caPem, timeout: 20_000, headers: { accept } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** The sandbox's cached Kubernetes credentials (one file per service and login). */
function cachedCredentials(sb: Sandbox): { file: string; token: string; expiresAt: string } | undefined {
  const dir = join(sb.devtoolHome, 'kube-credentials');
  const name = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.json')) : undefined;
  if (!name) return undefined;
  const file = join(dir, name);
  return { file, ...(JSON.parse(readFileSync(file, 'utf8')) as { token: string; expiresAt: string }) };
}

describe('service contexts: namespaces and the user’s own cluster credentials, on the installed service', () => {
  before(async () => {
    svc = await installedService();
    ({ kc, core, url } = svc);
    tokenA = await svc.createUser(userA, true);
    tokenB = await svc.createUser(userB);
    a = createSandbox();
    b = createSandbox();
    for (const [sb, token, user] of [
      [a, tokenA, userA],
      [b, tokenB, userB],
    ] as const) {
      // The first login trusts the front door's CA as a user does; every later call uses the CA stored with the context.
      const r = devtool(sb, ['context', 'use', url, '--token', token], { env: { DEVTOOL_CA_CERT: svc.caFile } });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `Using context ${url} as ${user}: namespace "${user}-devtool" @ ${url}\n`);
    }
  });

  after(async () => {
    killUpSessions();
    if (!core) return;
    const held = await core.readNamespacedConfigMap({ name: 'held', namespace: shop }).catch(() => undefined);
    if (held) {
      await core
        .patchNamespacedConfigMap(
          { name: 'held', namespace: shop, body: [{ op: 'remove', path: '/metadata/finalizers' }] },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
        )
        .catch(() => {});
    }
    // Their personal namespaces and those they created (owned), their ServiceAccounts and Secrets.
    await svc.removeUsers();
  });

  test('namespace create makes one the user owns and switches to it; list shows Namespace, Status and * on the current one', async () => {
    const r = devtool(a, ['namespace', 'create', shop]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Namespace "${shop}" created\nUsing namespace "${shop}" @ ${url} (${url})\n`);
    // Ours to delete if this run is cut off before its cleanup (scripts/test.sh).
    await svc.markForCleanup(shop);
    assert.equal(JSON.parse(devtool(a, ['context', 'show']).stdout).namespace, shop);
    const list = devtool(a, ['namespace', 'list']);
    assert.equal(list.code, 0, list.stderr);
    const rows = list.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split(/\s{3,}/));
    assert.deepEqual(rows, [
      ['Namespace', 'Status'],
      [`${userA}-devtool`, 'Active'],
      [`${shop} *`, 'Active'],
    ]);
  });

  test('taken, reserved and invalid names are refused in one line each, nothing made', () => {
    const taken = devtool(b, ['namespace', 'create', shop]);
    assert.equal(taken.code, 1);
    assert.equal(taken.stderr, `Error: namespace ${shop} is taken: choose another name\n`);
    const system = devtool(b, ['namespace', 'create', 'kube-system']);
    assert.equal(system.stderr, "Error: namespace kube-system is reserved (Kubernetes' own: kube-*, default): choose another name\n");
    const reserved = devtool(b, ['namespace', 'create', `x${run}-devtool`]);
    assert.equal(reserved.code, 1);
    assert.equal(reserved.stderr, `Error: namespace x${run}-devtool: names ending in -devtool are reserved for personal namespaces\n`);
    const invalid = devtool(b, ['namespace', 'create', 'Bad_Name']);
    assert.equal(invalid.code, 2);
    assert.equal(invalid.stderr.split('\n').length, 2, invalid.stderr);
    assert.match(invalid.stderr, /invalid namespace "Bad_Name"/);
    assert.equal(JSON.parse(devtool(b, ['context', 'show']).stdout).namespace, `${userB}-devtool`, 'B’s context did not move');
  });

  test('create of a namespace one owns already is no failure: it says so and switches to it', () => {
    assert.equal(devtool(a, ['namespace', 'use', `${userA}-devtool`]).code, 0);
    const again = devtool(a, ['namespace', 'create', shop]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, `Namespace "${shop}" is already yours\nUsing namespace "${shop}" @ ${url} (${url})\n`);
    assert.equal(JSON.parse(devtool(a, ['context', 'show']).stdout).namespace, shop);
  });

  test('an unknown path: a browser gets an HTML page, an API client the one-line JSON', async () => {
    const browser = await getWithAccept('/no-such-page', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8');
    assert.equal(browser.status, 404);
    assert.match(browser.type, /^text\/html/, browser.body);
    assert.match(browser.body, /<h1>Page not found<\/h1>/);
    const api = await getWithAccept('/api/v1/no-such-route', 'application/json');
    assert.deepEqual([api.status, api.type.split(';')[0], JSON.parse(api.body)], [404, 'application/json', { error: 'no route GET /api/v1/no-such-route' }]);
  });

  test('B cannot list, use or delete A’s namespace through devtool', () => {
    const list = devtool(b, ['namespace', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.doesNotMatch(list.stdout, new RegExp(shop));
    assert.match(list.stdout, new RegExp(`^${userB}-devtool \\* +Active$`, 'm'));
    const use = devtool(b, ['namespace', 'use', shop]);
    assert.equal(use.code, 1);
    assert.equal(use.stderr, `Error: namespace "${shop}" is not one of yours on ${url} (yours: ${userB}-devtool)\n`);
    const del = devtool(b, ['namespace', 'delete', shop]);
    assert.equal(del.code, 1);
    assert.equal(del.stderr, `Error: namespace ${shop}: only its owner (${userA}) or an admin can delete it\n`);
  });

  test('B’s commands in A’s namespace are refused in one line: what, to whom, what to do', () => {
    const project = mkdtempSync(join(b.root, 'project-'));
    writeFileSync(join(project, 'devtool.yml'), 'services:\n  web:\n    sync: [".:/app"]\n');
    const refusal = new RegExp(
      `^Error: the Kubernetes API server \\S+ refused to \\w+ \\S+ in namespace ${shop} to system:serviceaccount:\\S+:user-${userB} \\(403 Forbidden\\): ` +
        `ask the owner of namespace ${shop} for access, or use a namespace of yours \\(--namespace, or 'devtool namespace use <name>'\\)$`,
    );
    for (const args of [
      ['endpoints', '--namespace', shop, '--name', 'web'],
      ['up', 'web', '-n', shop],
      ['down', 'web', '-n', shop],
    ]) {
      const r = devtool(b, args, { cwd: project, timeoutMs: 60_000 });
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      const errors = r.stderr.split('\n').filter((l) => l.startsWith('Error: '));
      assert.equal(errors.length, 1, r.stderr);
      assert.match(errors[0]!, refusal, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /HTTP-Code|Headers:|Unknown API Status/);
    }
  });

  test('a Compose app deploys into the user’s namespace with the user’s own credentials; its endpoint answers over HTTPS', { timeout: 300_000 }, async () => {
    const fixture = join(repoRoot, 'test/e2e/fixtures/front-door');
    const d = devtool(a, ['deploy', '--name', 'web', '--wait', '--timeout', '3m'], {
      cwd: fixture,
      env: { REGISTRY, PAGE_TOKEN: run },
      timeoutMs: 240_000,
    });
    assert.equal(d.code, 0, `deploy failed:\n${d.stdout}\n${d.stderr}`);
    const pods = (await core.listNamespacedPod({ namespace: shop, labelSelector: '' })).items;
    assert.ok(
      pods.some((p) => p.status?.phase === 'Running'),
      `a running pod in ${shop}: ${pods.map((p) => p.metadata?.name).join(', ')}`,
    );
    const e = devtool(a, ['endpoints', '--name', 'web', '--output', 'json']);
    assert.equal(e.code, 0, e.stderr);
    const endpoint = `https://web-${shop}.devtool.test`;
    assert.deepEqual(JSON.parse(e.stdout), [endpoint]);
    // Through the front door, trusting its CA only: the page of this deploy (PAGE_TOKEN).
    const last = await whenAnswering(endpoint, svc.caPem);
    assert.equal(last.body, `front door page ${run}\n`);
  });

  test('kubectl with the kubeconfig `devtool kubeconfig` wrote: A works in its namespace, B reaches nothing of A’s', async () => {
    const host = new URL(url).host.replace(/[^A-Za-z0-9-]+/g, '_');
    for (const [sb, ns] of [
      [a, shop],
      [b, `${userB}-devtool`],
    ] as const) {
      const r = devtool(sb, ['kubeconfig']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `Updated context "${host}" (namespace "${ns}") in ${sb.kubeconfig}\n`);
      const c = cachedCredentials(sb);
      assert.ok(c, 'the credentials are cached');
      assert.equal(statSync(c.file).mode & 0o777, 0o600);
    }
    const pod = (await core.listNamespacedPod({ namespace: shop })).items.find((p) => p.status?.phase === 'Running')!.metadata!.name!;
    const okA = kubectl(a, ['get', 'pods', '-o', 'name']);
    assert.equal(okA.code, 0, okA.stderr);
    assert.match(okA.stdout, new RegExp(`pod/${pod}`));
    const execA = kubectl(a, ['exec', pod, '--', 'cat', '/usr/share/nginx/html/index.html']);
    assert.equal(execA.code, 0, execA.stderr);
    assert.equal(execA.stdout, `front door page ${run}\n`);
    for (const args of [
      ['get', 'namespaces'],
      ['get', 'namespace', shop],
      ['get', 'pods', '-n', shop],
      ['get', 'pod', pod, '-n', shop],
      ['exec', '-n', shop, pod, '--', 'true'],
      ['delete', 'namespace', shop, '--wait=false'],
      ['delete', 'pod', pod, '-n', shop, '--wait=false'],
    ]) {
      const r = kubectl(b, args);
      assert.notEqual(r.code, 0, `B: kubectl ${args.join(' ')} must be refused`);
      assert.match(r.stderr, /forbidden/i, `B: kubectl ${args.join(' ')}: ${r.stderr}`);
    }
    const ownB = kubectl(b, ['get', 'pods']);
    assert.equal(ownB.code, 0, `B works in its own namespace: ${ownB.stderr}`);
    for (const sb of [a, b]) {
      const r = kubectl(sb, ['get', 'secrets', '-n', SERVICE_NAMESPACE]);
      assert.match(r.stderr, /forbidden/i, 'nobody gets the service’s rights (its accounts and tokens)');
    }
    assert.equal((await core.readNamespace({ name: shop })).metadata?.deletionTimestamp, undefined, 'A’s namespace is intact');
  });

  test('the credential plugin fetches a new token when the cached one is gone or expired, never using an expired one', () => {
    const first = cachedCredentials(a)!;
    // The chart leaves DEVTOOL_KUBE_TOKEN_SECONDS at the service's default, an hour.
    assert.ok(Date.parse(first.expiresAt) - Date.now() <= 3_600_000 + 5_000, 'tokens live DEVTOOL_KUBE_TOKEN_SECONDS (1 h)');
    rmSync(first.file);
    const again = kubectl(a, ['get', 'pods', '-o', 'name']);
    assert.equal(again.code, 0, again.stderr);
    const second = cachedCredentials(a)!;
    assert.notEqual(second.token, first.token, 'a new token was fetched');
    // An expired cache entry (its token unusable): the plugin must fetch, not hand it to kubectl.
    const stale = { ...JSON.parse(readFileSync(second.file, 'utf8')), token: 'expired', fetchedAt: '2020-01-01T00:00:00Z', expiresAt: '2020-01-01T00:10:00Z' };
    writeFileSync(second.file, JSON.stringify(stale));
    const afterExpiry = kubectl(a, ['get', 'pods', '-o', 'name']);
    assert.equal(afterExpiry.code, 0, afterExpiry.stderr);
    const third = cachedCredentials(a)!;
    assert.notEqual(third.token, 'expired');
    assert.ok(Date.parse(third.expiresAt) > Date.now() + 60_000);
    const plugin = devtool(a, ['kubetoken', '--context', url]);
    assert.equal(plugin.code, 0, plugin.stderr);
    const cred = JSON.parse(plugin.stdout) as { apiVersion: string; kind: string; status: { token: string; expirationTimestamp: string } };
    assert.equal(cred.apiVersion, 'client.authentication.k8s.io/v1');
    assert.equal(cred.kind, 'ExecCredential');
    assert.equal(cred.status.token, third.token, 'a fresh cached token is reused');
    // A context made by DEVTOOL_URL + DEVTOOL_TOKEN (CI) is stored nowhere: the plugin takes it from its environment.
    const envOnly = devtool(createSandbox(), ['kubetoken', '--context', url], {
      env: { DEVTOOL_URL: url, DEVTOOL_TOKEN: tokenA, DEVTOOL_CA_CERT: svc.caFile },
    });
    assert.equal(envOnly.code, 0, envOnly.stderr);
    assert.equal((JSON.parse(envOnly.stdout) as { kind: string }).kind, 'ExecCredential');
  });

  test('up, exec and down on the service context run with the user’s own credentials', { timeout: 400_000 }, async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const serve = "require('http').createServer((q,r)=>r.end('original')).listen(8080)";
    await apps.createNamespacedDeployment({
      namespace: shop,
      body: {
        metadata: { name: 'api', labels: { app: 'api' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: { containers: [{ name: 'api', image: `${REGISTRY}/node:20`, command: ['node', '-e', serve] }] },
          },
        },
      },
    });
    const folder = mkdtempSync(join(a.root, 'project-'));
    writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    environment: {FROM_MANIFEST: "1"}\n');
    // The agent image comes from the registry the service announces (localhost:5000/devtool-bin:<version>).
    const session = await startUp([], { env: a.env, cwd: folder });
    assert.match(session.stdout(), /dev container api-devtool is ready/);
    const e = devtool(a, ['exec', '--', 'sh', '-c', 'echo $FROM_MANIFEST'], { cwd: folder, timeoutMs: 60_000 });
    assert.equal(e.code, 0, e.stderr);
    assert.equal(e.stdout, '1\n');
    await session.stop();
    const down = devtool(a, ['down'], { cwd: folder, timeoutMs: 120_000 });
    assert.equal(down.code, 0, down.stderr);
    assert.equal((await apps.readNamespacedDeployment({ name: 'api', namespace: shop })).spec?.replicas, 1, 'the original is back');
  });

  test("an expired run token (its run's end never recorded) is not listed and is deleted", async () => {
    // A week-old run's token, as the service writes one: the one way a test lets its expiry pass.
    const id = randomBytes(12).toString('hex');
    const name = `devtool-token-${id}`;
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    await core.createNamespacedSecret({
      namespace: SERVICE_NAMESPACE,
      body: {
        metadata: { name, labels: { 'devtool.dev/kind': 'token', 'devtool.dev/user': userB, 'app.kubernetes.io/managed-by': 'devtool-service' } },
        data: {
          hash: b64(id + randomBytes(20).toString('hex')),
          name: b64(`pipeline web in ${userB}-devtool (run 0abc12)`),
          createdAt: b64(new Date(Date.now() - 7 * 86_400_000).toISOString()),
          expiresAt: b64(new Date(Date.now() - 7 * 86_400_000 + 900_000).toISOString()),
          scope: b64('run'),
        },
      },
    });
    const list = await serviceCall(url, svc.caPem, tokenB, 'GET', '/api/v1/tokens');
    assert.equal(list.status, 200, list.body);
    const names = (JSON.parse(list.body) as { tokens: { name: string }[] }).tokens.map((t) => t.name);
    assert.deepEqual(names, ['created with the account']);
    assert.equal(await core.readNamespacedSecret({ name, namespace: SERVICE_NAMESPACE }).catch(() => undefined), undefined, 'the expired token is deleted');
  });

  test('users: a plain user cannot disable or delete one; an admin disables (tokens, kubectl and CLI stop), enables and deletes', async () => {
    const c = createSandbox();
    const tokenC = await svc.createUser(userC);
    assert.equal(devtool(c, ['context', 'use', url, '--token', tokenC], { env: { DEVTOOL_CA_CERT: svc.caFile } }).code, 0);
    const cns = `c-${run}`;
    assert.equal(devtool(c, ['namespace', 'create', cns]).code, 0);
    await svc.markForCleanup(cns);
    assert.equal(devtool(c, ['kubeconfig']).code, 0);
    assert.equal(kubectl(c, ['get', 'pods']).code, 0);

    // B, no admin: refused through the CLI and through the API, and C is untouched.
    for (const verb of ['disable', 'delete', 'enable'] as const) {
      const r = devtool(b, ['user', verb, userC]);
      assert.equal(r.code, 1, r.stdout);
      assert.equal(r.stderr, `Error: only admins can ${verb} users\n`);
    }
    assert.equal((await serviceCall(url, svc.caPem, tokenB, 'DELETE', `/api/v1/users/${userC}`)).status, 403);
    assert.equal((await serviceCall(url, svc.caPem, tokenB, 'POST', `/api/v1/users/${userA}/disable`)).status, 403);
    assert.equal(devtool(c, ['namespace', 'list']).code, 0, 'C still works');
    const self = devtool(a, ['user', 'disable', userA]);
    assert.equal(self.stderr, 'Error: you cannot disable your own account: ask another admin\n');

    // A, an admin, disables C: the CLI, the API token and the kubectl credentials stop.
    const disabled = devtool(a, ['user', 'disable', userC]);
    assert.equal(disabled.code, 0, disabled.stderr);
    const at = Date.now();
    const cli = devtool(c, ['namespace', 'list']);
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /^Error: .*token revoked or expired/);
    assert.equal((await serviceCall(url, svc.caPem, tokenC, 'GET', '/api/v1/me')).status, 401);
    let last = '';
    await waitFor(
      "C's kubectl refused",
      () => {
        const r = kubectl(c, ['get', 'pods']);
        last = `${r.code} ${r.stderr}`;
        return r.code !== 0;
      },
      30_000,
    ).catch(() => assert.fail(`C's kubectl still works 30 s after the disable: ${last}`));
    console.log(`kubectl of a disabled user refused ${Date.now() - at} ms after the disable: ${last.trim().split('\n')[0]}`);
    assert.equal((await core.readNamespace({ name: cns })).status?.phase, 'Active', 'its namespaces stay');

    const enabled = devtool(a, ['user', 'enable', userC]);
    assert.equal(enabled.code, 0, enabled.stderr);
    assert.equal((await serviceCall(url, svc.caPem, tokenC, 'GET', '/api/v1/me')).status, 401, 'its old tokens stay deleted');

    const deleted = devtool(a, ['user', 'delete', userC]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, `User "${userC}" is deleted, with its namespaces: ${cns}, ${userC}-devtool\n`);
    for (const name of [cns, `${userC}-devtool`]) {
      const ns = await core.readNamespace({ name }).catch(() => undefined);
      assert.ok(!ns || ns.metadata?.deletionTimestamp, `${name} is being deleted`);
    }
    assert.equal(
      await core.readNamespacedServiceAccount({ name: `user-${userC}`, namespace: SERVICE_NAMESPACE }).catch(() => undefined),
      undefined,
      'the account is gone',
    );
    assert.equal(devtool(a, ['user', 'delete', userC]).stderr, `Error: no user ${userC}\n`);
  });

  test('users: a plain user cannot list, create or make admins (itself included); an admin creates one who logs in, and makes it admin and back', async () => {
    const userD = `e2ekd${run}`;
    // B, no admin: refused through the CLI and the API, for itself too, and nothing is made.
    assert.equal(devtool(b, ['user', 'list']).stderr, 'Error: only admins can list users\n');
    assert.equal(devtool(b, ['user', 'create', userD, '--admin']).stderr, 'Error: only admins can create users\n');
    assert.equal(devtool(b, ['user', 'admin', userB]).stderr, 'Error: only admins can make or unmake admin users\n');
    assert.equal((await serviceCall(url, svc.caPem, tokenB, 'POST', '/api/v1/users', { name: userD, admin: true })).status, 403);
    assert.equal((await serviceCall(url, svc.caPem, tokenB, 'PUT', `/api/v1/users/${userB}/admin`, { admin: true })).status, 403);
    assert.equal(await core.readNamespacedServiceAccount({ name: `user-${userD}`, namespace: SERVICE_NAMESPACE }).catch(() => undefined), undefined);
    assert.equal((JSON.parse((await serviceCall(url, svc.caPem, tokenB, 'GET', '/api/v1/me')).body) as { admin: boolean }).admin, false);

    // A, an admin: creates D, whose printed token logs in; makes D an admin, then not.
    const made = devtool(a, ['user', 'create', userD]);
    assert.equal(made.code, 0, made.stderr);
    await svc.markForCleanup(`${userD}-devtool`);
    const d = createSandbox();
    const login = devtool(d, ['context', 'use', url, '--token', made.stdout.trim()], { env: { DEVTOOL_CA_CERT: svc.caFile } });
    assert.equal(login.code, 0, login.stderr);
    assert.match(devtool(d, ['namespace', 'list']).stdout, new RegExp(`^${userD}-devtool \\* +Active$`, 'm'));
    assert.equal(devtool(a, ['user', 'admin', userD]).code, 0);
    const listed = devtool(d, ['user', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${userD} +yes +no$`, 'm'));
    assert.match(listed.stdout, new RegExp(`^${userB} +no +no$`, 'm'));
    assert.equal(devtool(a, ['user', 'admin', userD, '--revoke']).code, 0);
    assert.equal(devtool(d, ['user', 'list']).stderr, 'Error: only admins can list users\n');
    assert.equal(devtool(a, ['user', 'delete', userD]).code, 0);
  });

  test('delete: by an admin or the owner; a namespace being deleted stays listed as Terminating', async () => {
    const other = `b-${run}`;
    assert.equal(devtool(b, ['namespace', 'create', other]).code, 0);
    const byAdmin = devtool(a, ['namespace', 'delete', other]);
    assert.equal(byAdmin.code, 0, byAdmin.stderr);
    assert.equal(byAdmin.stdout, `Namespace "${other}" is being deleted\n`);
    // Something that holds the namespace in Terminating until the test lets it go.
    await core.createNamespacedConfigMap({ namespace: shop, body: { metadata: { name: 'held', finalizers: ['devtool.dev/e2e-hold'] } } });
    // The namespace the context uses: the context moves to the personal namespace.
    const del = devtool(a, ['namespace', 'delete', shop]);
    assert.equal(del.code, 0, del.stderr);
    assert.equal(del.stdout, `Namespace "${shop}" is being deleted\nUsing namespace "${userA}-devtool" @ ${url} (${url})\n`);
    const list = devtool(a, ['namespace', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${shop} +Terminating$`, 'm'));
    assert.match(list.stdout, new RegExp(`^${userA}-devtool \\* +Active$`, 'm'));
    const recreate = devtool(a, ['namespace', 'create', shop]);
    assert.equal(recreate.code, 1);
    assert.equal(recreate.stderr, `Error: namespace ${shop} is yours and being deleted: create it again once it is gone\n`);
  });
});
