/**
 * Who may claim a host at the front door, as two plain users of the installed service meet it. B,
 * with the kubeconfig `devtool kubeconfig` wrote, creates an Ingress in its own namespace for A's
 * future endpoint (`web-<A's namespace>.devtool.test`) and for github.com, before A deploys. Then A
 * deploys its Compose app: A's endpoint answers with A's page over HTTPS, no certificate is issued
 * for github.com, B's Ingress shows no address, and B sees why in its events (the operator in the
 * controller's log).
 * The CA clients trust carries a name constraint: a certificate it signs for github.com or for an
 * IP address is rejected by Node and curl, one for a name under the endpoint domain accepted.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect, createServer } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { REGISTRY } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool, type Sandbox } from './cli.ts';
import { runningPod } from './cluster.ts';
import { type InstalledService, installedService, SERVICE_NAMESPACE, whenAnswering } from './installed-service.ts';
import { waitFor } from './wait.ts';

const DOMAIN = 'devtool.test';
const run = randomBytes(3).toString('hex');
const userA = `e2eha${run}`;
const userB = `e2ehb${run}`;
const nsA = `${userA}-devtool`;
const nsB = `${userB}-devtool`;
const hostA = `web-${nsA}.${DOMAIN}`;

let svc: InstalledService;
let a: Sandbox;
let b: Sandbox;

const devtool = (sb: Sandbox, args: string[], opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) =>
  runDevtool(args, { env: { ...sb.env, ...opts.env }, ...(opts.cwd ? { cwd: opts.cwd } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });

/** The cluster's own kubectl, with only the sandbox's kubeconfig: what a user would run. */
function kubectl(sb: Sandbox, args: string[], input?: string) {
  const bin = '/var/cache/devtool-cluster/bin';
  const dir = readdirSync(bin).find((d) => d.startsWith('k8s-') && existsSync(join(bin, d, 'kubectl')));
  assert.ok(dir, `no kubectl under ${bin}`);
  const r = spawnSync(join(bin, dir, 'kubectl'), ['--request-timeout=20s', ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: sb.home, KUBECONFIG: sb.kubeconfig },
    encoding: 'utf8',
    timeout: 60_000,
    ...(input === undefined ? {} : { input }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A TLS handshake with the front door for `servername`, trusting only the CA: 'ok' or the error. */
function handshake(address: string, servername: string, ca: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port: 443, servername, ca, timeout: 10_000 }, () => {
      resolve('ok');
      socket.destroy();
    });
    socket.on('timeout', () => socket.destroy(new Error('timed out')));
    socket.on('error', (e: NodeJS.ErrnoException) => resolve(`${e.code ?? ''} ${e.message}`));
  });
}

function curl(args: string[]) {
  return spawnSync('curl', ['-sS', '--max-time', '10', ...args], { encoding: 'utf8' });
}

function openssl(args: string[], cwd: string): string {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `openssl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('front door hosts: a namespace claims its own endpoints only, and the CA signs names under the endpoint domain only', () => {
  before(async () => {
    svc = await installedService();
    a = createSandbox();
    b = createSandbox();
    for (const [sb, user] of [
      [a, userA],
      [b, userB],
    ] as const) {
      const token = await svc.createUser(user);
      const r = devtool(sb, ['context', 'use', svc.url, '--token', token], { env: { DEVTOOL_CA_CERT: svc.caFile } });
      assert.equal(r.code, 0, r.stderr);
    }
    const k = devtool(b, ['kubeconfig']);
    assert.equal(k.code, 0, k.stderr);
  });

  after(async () => {
    if (svc) await svc.removeUsers();
  });

  test("B's Ingress for A's future endpoint and for github.com is not served; A's own deploy answers with A's page", { timeout: 400_000 }, async () => {
    const squat = `
apiVersion: v1
kind: Service
metadata: {name: decoy}
spec: {ports: [{port: 80}], selector: {app: nothing}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: squat}
spec:
  rules:
    - {host: ${hostA}, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: decoy, port: {number: 80}}}}]}}
    - {host: github.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: decoy, port: {number: 80}}}}]}}
`;
    const applied = kubectl(b, ['apply', '-f', '-'], squat);
    assert.equal(applied.code, 0, `B may create Ingresses in its own namespace: ${applied.stderr}`);
    // Ingresses claim hosts by age (seconds): A's comes clearly later.
    await new Promise((r) => setTimeout(r, 2_000));

    const fixture = join(repoRoot, 'test/e2e/fixtures/front-door');
    const d = devtool(a, ['deploy', '--name', 'web', '--wait', '--timeout', '3m'], { cwd: fixture, env: { REGISTRY, PAGE_TOKEN: run }, timeoutMs: 240_000 });
    assert.equal(d.code, 0, `deploy failed:\n${d.stdout}\n${d.stderr}`);
    const e = devtool(a, ['endpoints', '--name', 'web', '--output', 'json']);
    assert.equal(e.code, 0, e.stderr);
    assert.deepEqual(JSON.parse(e.stdout), [`https://${hostA}`]);
    const page = await whenAnswering(`https://${hostA}/`, svc.caPem, 60_000).catch((err: Error) => assert.fail(`A's endpoint: ${err.message}`));
    assert.equal(page.body, `front door page ${run}\n`, "A's host is served by A's backend");

    // github.com, asked of the front door by name: no certificate, whatever the time to issue one.
    const node = (await lookup(new URL(svc.url).hostname, { family: 4 })).address;
    for (let i = 0; i < 5; i++) {
      const h = await handshake(node, 'github.com', svc.caPem);
      assert.notEqual(h, 'ok', 'the front door presented a certificate for github.com that the CA signed');
      assert.match(h, /alert internal error|ECONNRESET|EPROTO/, h);
      await new Promise((r) => setTimeout(r, 2_000));
    }
    const c = curl(['--cacert', svc.caFile, '--resolve', `github.com:443:${node}`, 'https://github.com/']);
    assert.equal(c.status, 35, `curl to github.com at the front door: exit ${c.status} ${c.stdout}${c.stderr}`); // 35: TLS handshake failed

    // B's Ingress is not served (no address), and the controller says why: to B in an event, to the operator in its log.
    let events = '';
    await waitFor(
      "B sees why in its Ingress's events",
      () => {
        events = kubectl(b, [
          'get',
          'events',
          '--field-selector',
          'involvedObject.kind=Ingress,involvedObject.name=squat',
          '-o',
          'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
        ]).stdout;
        return events.includes('github.com');
      },
      20_000,
    ).catch(() => assert.fail(`no event on B's Ingress about github.com: ${events}`));
    assert.match(events, new RegExp(`NotServed: the host ${hostA.replaceAll('.', '\\.')} is not namespace ${nsB}'s`), events);
    assert.match(events, /NotServed: the host github\.com is outside the endpoint domain/, events);
    const status = kubectl(b, ['get', 'ingress', 'squat', '-o', 'jsonpath={.status.loadBalancer.ingress}']);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(status.stdout, '', "B's Ingress shows no address");
    const pod = await runningPod(svc.core, SERVICE_NAMESPACE, 'app.kubernetes.io/component=front-door');
    let log = '';
    await waitFor(
      'the controller logs why',
      async () => {
        log = await svc.core.readNamespacedPodLog({ name: pod, namespace: SERVICE_NAMESPACE, container: 'controller' });
        return log.includes(`${nsB}/squat: the host github.com`);
      },
      20_000,
    ).catch(() => assert.fail(`no line about ${nsB}/squat in the controller's log:\n${log.slice(-3000)}`));
    assert.match(log, new RegExp(`not served: ${nsB}/squat: the host ${hostA.replaceAll('.', '\\.')} is not namespace ${nsB}'s`));
    assert.match(log, new RegExp(`not served: ${nsB}/squat: the host github\\.com is outside the endpoint domain ${DOMAIN.replace('.', '\\.')}`));
  });

  test('the CA is constrained to the endpoint domain: its certificate for github.com or an IP address is rejected', { timeout: 60_000 }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'devtool-nc-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const constraints = openssl(['x509', '-in', svc.caFile, '-noout', '-ext', 'nameConstraints'], dir);
    assert.match(constraints, /X509v3 Name Constraints: critical/);
    const permitted = constraints.split('Excluded:')[0]?.split('Permitted:')[1]?.trim().split(/\s+/);
    assert.deepEqual(permitted, [`DNS:${DOMAIN}`], constraints);
    assert.match(constraints, /Excluded:\s+IP:0\.0\.0\.0\/0\.0\.0\.0\s+IP:0:0:0:0:0:0:0:0\/0:0:0:0:0:0:0:0/, constraints);

    // Leaves as a mis-issuing front door would make them, signed with the operator's CA key.
    const caKey = join(dirname(svc.caFile), 'ca.key');
    const leaf = (name: string, san: string) => {
      openssl(
        [
          'req',
          '-new',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-subj',
          `/CN=${name}`,
          '-keyout',
          `${name}.key`,
          '-out',
          `${name}.csr`,
        ],
        dir,
      );
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\n`);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          svc.caFile,
          '-CAkey',
          caKey,
          '-set_serial',
          `0x${randomBytes(8).toString('hex')}`,
          '-days',
          '1',
          '-extfile',
          `${name}.ext`,
          '-out',
          `${name}.crt`,
        ],
        dir,
      );
      return { key: readFileSync(join(dir, `${name}.key`)), cert: readFileSync(join(dir, `${name}.crt`)) };
    };
    /** Node's and curl's verdicts on the leaf, as a server at `name` (a DNS name or 127.0.0.1) presents it. */
    const serve = async (name: string, san: string, host: string) => {
      const byName = host !== '127.0.0.1';
      const server = createServer(leaf(name, san), (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n'));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as { port: number }).port;
      try {
        const node = await new Promise<string>((resolve) => {
          const s = connect({ host: '127.0.0.1', port, ...(byName ? { servername: host } : {}), ca: svc.caPem, checkServerIdentity: () => undefined }, () => {
            resolve('ok');
            s.destroy();
          });
          s.on('error', (e: NodeJS.ErrnoException) => resolve(`${e.code ?? ''} ${e.message}`));
        });
        // curl verifies its peer with the same CA and checks the name; a child process, so the server here can answer.
        const curl = await new Promise<string>((resolve) => {
          const resolve_ = byName ? ['--resolve', `${host}:${port}:127.0.0.1`] : [];
          const p = spawn('curl', ['-sS', '--max-time', '10', '--cacert', svc.caFile, ...resolve_, `https://${host}:${port}/`], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          p.stdout.on('data', (d: Buffer) => (out += d.toString()));
          p.stderr.on('data', (d: Buffer) => (out += d.toString()));
          p.on('close', (code) => resolve(`exit ${code}: ${out.split('\n')[0]}`));
        });
        return { node, curl };
      } finally {
        server.close();
      }
    };
    const inside = await serve('inside', `DNS:web-x.${DOMAIN}`, `web-x.${DOMAIN}`);
    assert.equal(inside.node, 'ok', 'a name under the endpoint domain is accepted');
    assert.equal(inside.curl, 'exit 0: ok', 'by curl too');
    const github = await serve('github', 'DNS:github.com', 'github.com');
    assert.match(github.node, /permitted subtree violation/, github.node);
    assert.equal(github.curl, 'exit 60: curl: (60) SSL certificate problem: permitted subtree violation');
    const ip = await serve('ip', 'IP:127.0.0.1', '127.0.0.1');
    assert.match(ip.node, /excluded subtree violation/, ip.node);
    assert.equal(ip.curl, 'exit 60: curl: (60) SSL certificate problem: excluded subtree violation');
  });
});
