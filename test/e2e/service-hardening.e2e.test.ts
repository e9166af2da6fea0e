/**
 * The installed service's own defences, attacked as a plain user (installed-service.ts):
 * - a pod in the user's own namespace dials the service's ClusterIP with forged X-Forwarded-For
 *   addresses: its password guesses still hit the per-client limit (the header is believed only
 *   from the front door's address);
 * - unauthenticated device-code requests are bounded per client;
 * - password guesses against one account through the front door, each from another forged
 *   address, are refused per account;
 * - the session and pre-sign-in CSRF cookies are `__Host-`: a cookie a sibling host (a user's
 *   endpoint under the same domain) plants under the plain name is not read;
 * - GET /metrics refuses a caller without the scraper token;
 * - `devtool namespace create` refuses Kubernetes' names and the service's namespace in one line;
 * - while a build tunnel is open (src/service/build-tunnel.ts, as `devtool build` opens it), another
 *   local user connecting to its listener gets nothing of the BuildKit daemon.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { REGISTRY } from '../../cluster/test-cluster.ts';
import { openBuildTunnel } from '../../src/service/build-tunnel.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { type InstalledService, installedService, SERVICE_NAMESPACE, SERVICE_PODS } from './installed-service.ts';

const run = randomBytes(3).toString('hex');
const user = `e2ehu${run}`;
const victim = `e2ehv${run}`;
const attacker = `e2eha${run}`;
const PASSWORD = `pass-${run}-long enough`;

let svc: InstalledService;
let url: string;
let sb: Sandbox;
let apiToken: string;
const deviceCodes: string[] = [];

interface Answer {
  status: number;
  body: string;
  cookies: string[];
}

/** One request through the front door, trusting its CA only. */
function call(method: string, path: string, o: { headers?: Record<string, string>; form?: Record<string, string>; json?: unknown } = {}): Promise<Answer> {
  const body = o.form ? new URLSearchParams(o.form).toString() : o.json !== undefined ? JSON.stringify(o.json) : undefined;
  const headers: Record<string, string> = { ...o.headers };
  if (o.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  if (o.json !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers, ca: svc.caPem, timeout: 20_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, cookies: [res.headers['set-cookie'] ?? []].flat() }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** `name=value` of the cookies an answer set (attributes dropped). */
const pairs = (a: Answer) => a.cookies.map((c) => c.split(';')[0]!);
const csrfOf = (a: Answer) => /name="csrf" value="([^"]+)"/.exec(a.body)?.[1] ?? '';

/** Signs up on the page (the local install's open sign-up); the session cookie as the browser would send it. */
async function signUp(name: string): Promise<string> {
  const page = await call('GET', '/login');
  const res = await call('POST', '/signup', {
    headers: { cookie: pairs(page).join('; ') },
    form: { csrf: csrfOf(page), name, password: PASSWORD, password2: PASSWORD },
  });
  assert.equal(res.status, 303, res.body);
  await svc.adoptUser(name);
  const session = pairs(res).find((p) => /^(__Host-)?devtool_session=/.test(p));
  assert.ok(session, `no session cookie in ${res.cookies.join(' | ')}`);
  return session;
}

const devtool = (args: string[], env: Record<string, string> = {}) => runDevtool(args, { env: { ...sb.env, ...env } });

describe('the installed service holds against a plain user', () => {
  before(async () => {
    svc = await installedService();
    url = svc.url;
    apiToken = await svc.createUser(user);
    sb = createSandbox();
    const r = devtool(['context', 'use', url, '--token', apiToken], { DEVTOOL_CA_CERT: svc.caFile });
    assert.equal(r.code, 0, r.stderr);
  });

  after(async () => {
    // Device codes left pending would count against this machine's address for 10 minutes.
    for (const code of deviceCodes) {
      const id = code.split('.')[0]!.toLowerCase();
      await svc.core.deleteNamespacedSecret({ name: `devtool-device-${id}`, namespace: SERVICE_NAMESPACE }).catch(() => {});
    }
    await svc?.removeUsers();
  });

  test('a pod in the user’s namespace guessing passwords at the ClusterIP with forged X-Forwarded-For gets 429', { timeout: 240_000 }, async () => {
    // The user's own Kubernetes credentials, as `devtool kubeconfig` gets them.
    const creds = await call('POST', '/api/v1/kube-credentials', { headers: { authorization: `Bearer ${apiToken}` }, json: {} });
    assert.equal(creds.status, 200, creds.body);
    const { server, certificateAuthority, token } = JSON.parse(creds.body) as { server: string; certificateAuthority: string; token: string };
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server, caData: Buffer.from(certificateAuthority).toString('base64') }],
      users: [{ name: 'u', token }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const namespace = `${user}-devtool`;
    const clusterIp = (await svc.core.readNamespacedService({ name: 'devtool-service', namespace: SERVICE_NAMESPACE })).spec!.clusterIP!;
    // 80 sign-ins, each with another unknown name (no account is throttled) and another forged
    // client address, straight to the Service: the statuses, one per line.
    const script = `
const base = 'http://${clusterIp}';
(async () => {
  const page = await fetch(base + '/login');
  const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())[1];
  const out = [];
  for (let i = 0; i < 80; i++) {
    const res = await fetch(base + '/login', {
      method: 'POST', redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.' + (i + 1) },
      body: new URLSearchParams({ csrf, name: 'nobody${run}' + i, password: 'guess' + i }).toString(),
    });
    out.push(res.status);
  }
  console.log(out.join(' '));
})().catch((e) => { console.log('failed: ' + e.message); });
`;
    const pod = `guesser-${run}`;
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: pod },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'guess',
              image: `${REGISTRY}/node:20`,
              command: ['node', '-e', script],
              securityContext: {
                allowPrivilegeEscalation: false,
                runAsNonRoot: true,
                runAsUser: 1000,
                capabilities: { drop: ['ALL'] },
                seccompProfile: { type: 'RuntimeDefault' },
              },
            },
          ],
        },
      },
    });
    let phase = '';
    for (let i = 0; i < 180 && phase !== 'Succeeded' && phase !== 'Failed'; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      phase = (await core.readNamespacedPod({ name: pod, namespace })).status?.phase ?? '';
    }
    const log = (await core.readNamespacedPodLog({ name: pod, namespace })).trim();
    const statuses = log.split(' ').map(Number);
    assert.equal(statuses.length, 80, log);
    assert.ok(
      statuses.every((s) => s === 401 || s === 429),
      log,
    );
    // 30 per minute and client on each of the 2 replicas: at most 60 are even looked at.
    assert.ok(statuses.filter((s) => s === 401).length <= 60, log);
    assert.ok(statuses.includes(429), `no 429 for 80 guesses from one pod: ${log}`);
  });

  test('through the front door the client is the address the front door saw, not the front door’s', async () => {
    const probe = `/api/v1/info?probe=${run}`;
    assert.equal((await call('GET', probe)).status, 200);
    let seen: string[] = [];
    for (let i = 0; i < 20 && seen.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
      seen = [];
      for (const pod of (await svc.core.listNamespacedPod({ namespace: SERVICE_NAMESPACE, labelSelector: SERVICE_PODS })).items) {
        const log = await svc.core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: SERVICE_NAMESPACE, container: 'service', sinceSeconds: 120 });
        for (const line of log.split('\n').filter((l) => l.includes(probe))) {
          const address = (JSON.parse(line) as { req?: { remoteAddress?: string } }).req?.remoteAddress;
          if (address) seen.push(address);
        }
      }
    }
    assert.equal(seen.length, 1, `the request's log line: ${seen.join(', ')}`);
    assert.doesNotMatch(seen[0]!, /^10\.244\./, 'the front door (on the pod network) was taken for the client: trustedProxyAddresses does not match it');
  });

  test('device codes are bounded per client: an unauthenticated caller cannot make Secrets without end', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await call('POST', '/auth/device/code', { json: { client_id: 'devtool-cli', machine: `e2e-${run}` } });
      statuses.push(res.status);
      if (res.status === 200) deviceCodes.push((JSON.parse(res.body) as { device_code: string }).device_code);
      else assert.match(JSON.parse(res.body).error, /^too many device codes/);
    }
    assert.ok(statuses.filter((s) => s === 200).length <= 5, statuses.join(' '));
    assert.equal(statuses.at(-1), 429, statuses.join(' '));
  });

  test('password guesses against one account from ever other forged addresses are refused per account', async () => {
    await signUp(victim);
    const page = await call('GET', '/login');
    const cookie = pairs(page).join('; ');
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await call('POST', '/login', {
        headers: { cookie, 'x-forwarded-for': `198.51.100.${i + 1}` },
        form: { csrf: csrfOf(page), name: victim, password: `guess-${i}` },
      });
      statuses.push(res.status);
    }
    // 10 wrong passwords per account and replica (2): 25 guesses reach the limit on one of them.
    assert.ok(
      statuses.every((s) => s === 401 || s === 429),
      statuses.join(' '),
    );
    assert.ok(statuses.includes(429), `no 429 for 25 guesses at ${victim}: ${statuses.join(' ')}`);
    assert.ok(statuses.filter((s) => s === 401).length <= 20, statuses.join(' '));
  });

  test('__Host- cookies: a session or CSRF cookie planted by a sibling host is not read', async () => {
    const own = await signUp(`${victim}b`);
    const theirs = await signUp(attacker);
    assert.match(own, /^__Host-devtool_session=/);
    // What an endpoint host (web-<ns>.devtool.test) can set for the whole domain: the plain name.
    const planted = `devtool_session=${theirs.split('=')[1]}`;
    const tokens = await call('GET', '/account/tokens', { headers: { cookie: `${planted}; ${own}` } });
    assert.equal(tokens.status, 200);
    assert.match(tokens.body, new RegExp(`Sign out ${victim}b`));
    // Login CSRF: a planted double-submit cookie and the same value in the form signs no one in.
    const forged = 'x'.repeat(43);
    const login = await call('POST', '/login', {
      headers: { cookie: `devtool_csrf=${forged}` },
      form: { csrf: forged, name: attacker, password: PASSWORD },
    });
    assert.equal(login.status, 403);
    assert.equal(
      pairs(login).some((p) => /devtool_session=./.test(p)),
      false,
    );
    // A signed-in form with another session's CSRF token.
    const attackerPage = await call('GET', '/account/tokens', { headers: { cookie: theirs } });
    const post = await call('POST', '/account/tokens', { headers: { cookie: own }, form: { csrf: csrfOf(attackerPage), name: 'x' } });
    assert.equal(post.status, 403);
  });

  test('/metrics refuses a caller without the scraper token', async () => {
    const res = await call('GET', '/metrics');
    assert.equal(res.status, 401, res.body);
    assert.doesNotMatch(res.body, /devtool_http_requests_total/);
  });

  test('namespace create refuses Kubernetes’ names and the service’s own namespace in one line', () => {
    for (const [name, why] of [
      ['kube-foo', "Kubernetes' own: kube-*, default"],
      ['default', "Kubernetes' own: kube-*, default"],
      [SERVICE_NAMESPACE, "the devtool service's own namespace"],
    ] as const) {
      const r = devtool(['namespace', 'create', name]);
      assert.equal(r.code, 1, r.stdout);
      assert.equal(r.stderr, `Error: namespace ${name} is reserved (${why}): choose another name\n`);
    }
  });

  test('another local user gets nothing through the build tunnel’s listener while a build could run', async () => {
    const tunnel = await openBuildTunnel({ url, token: apiToken, ca: svc.caPem });
    try {
      // As user nobody: connect to what BuildKit's client would dial, send the HTTP/2 preface
      // gRPC starts with, and print what comes back (buildkitd answers with a SETTINGS frame).
      const probe = `
const net = require('node:net');
const a = new URL(process.argv[1]);
const s = a.protocol === 'unix:' ? net.connect(a.pathname) : net.connect(Number(a.port), a.hostname);
let got = 0;
s.on('connect', () => s.write('PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n' + '\\0\\0\\0\\x04\\0\\0\\0\\0\\0'));
s.on('data', (d) => (got += d.length));
s.on('error', (e) => { console.log('refused ' + e.code); process.exit(0); });
setTimeout(() => { console.log('received ' + got); process.exit(0); }, 5000);
`;
      // Asynchronously: the tunnel serves from this very process.
      const r = await promisify(execFile)(process.execPath, ['-e', probe, tunnel.address], { uid: 65534, gid: 65534, encoding: 'utf8', timeout: 20_000 });
      assert.match(r.stdout, /^(refused \S+|received 0)\n$/, `another user reached the builder through ${tunnel.address}: ${r.stdout}`);
    } finally {
      await tunnel.close();
    }
  });
});
