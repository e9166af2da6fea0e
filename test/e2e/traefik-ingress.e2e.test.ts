/**
 * The chart on a cluster whose ingress controller is another one (docs/clusters.md): Traefik
 * (cluster/traefik.sh, built from its Go module) serving its own IngressClass, with a wildcard
 * certificate for *.devtool.test that this test makes as an operator would (its own CA, not the
 * front door's) as Traefik's default certificate. The service is a release of its own installed
 * from this checkout with `ingress.enabled=false`, `ingress.className=traefik`,
 * `ingress.tlsSecretName` and the CA's certificate only (scripts/service-up.sh,
 * DEVTOOL_SERVICE_RELEASE and DEVTOOL_SERVICE_INGRESS_CLASS). Through the built CLI and Traefik over
 * TLS: a token login, a Compose app deployed on the service context whose endpoint answers,
 * `devtool endpoints`, a class-less Ingress while Traefik's class is the default, and an endpoint
 * with no ready pod.
 *
 * Traefik listens behind its ClusterIP Service; the shared front door keeps the node's ports and
 * every name under devtool.test keeps resolving to the node, except the few names this test points
 * at Traefik in /etc/hosts (`cluster/traefik.sh names`). Its class is the cluster's default for one
 * deploy only: hold the service lock for the whole run (nothing else makes class-less Ingresses
 * meanwhile).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes, type X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL, REGISTRY } from './cluster.ts';
import { type Fetched, httpsGet, kubectlAs, whenAnswering } from './installed-service.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const RELEASE = `trk${run}`;
const HOST = `devtool-${RELEASE}.devtool.test`;
const URL_ = `https://${HOST}`;
const user = `e2etrk${run}`;
const userNamespace = `${user}-devtool`;
/** A second user, whose namespace's endpoints the first one tries to take. */
const other = `e2etrkb${run}`;
/** The endpoint of the Compose app on the service context: its one public port's service name. */
const ENDPOINT = `https://web-${userNamespace}.devtool.test`;
/** A namespace an operator deploys to with the cluster's own credentials (no class configured). */
const plainNamespace = `trk${run}-plain`;
const PLAIN_ENDPOINT = `https://web-${plainNamespace}.devtool.test`;
const TLS_SECRET = 'wildcard-tls';
const work = mkdtempSync(join(tmpdir(), 'devtool-traefik-'));
const caFile = join(work, 'ca.crt');

let kubeconfig = '';
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let networking: k8s.NetworkingV1Api;
let caPem = '';
let sb: Sandbox;
let app = '';

/** A script of the checkout; its stdout's last line. */
function script(path: string, args: string[], env: Record<string, string> = {}, timeout = 1_800_000): string {
  const started = Date.now();
  const r = spawnSync('bash', [join(repoRoot, path), ...args], { encoding: 'utf8', timeout, env: { ...process.env, ...env } });
  assert.equal(r.status, 0, `${path} ${args.join(' ')} failed:\n${r.stderr.slice(-4000)}`);
  console.log(`${path} ${args.join(' ')}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return r.stdout.trim().split('\n').at(-1) ?? '';
}

function openssl(args: string[]) {
  const r = spawnSync('openssl', args, { encoding: 'utf8', cwd: work });
  assert.equal(r.status, 0, `openssl ${args.join(' ')}: ${r.stderr}`);
}

/** The operator's CA (constrained to devtool.test) and a wildcard certificate it signs. */
function operatorCertificates() {
  const ec = '-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes'.split(' ');
  const caExtensions = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'nameConstraints=critical,permitted;DNS:devtool.test'];
  openssl([
    'req',
    '-x509',
    ...ec,
    '-days',
    '2',
    '-subj',
    `/CN=e2e operator CA ${run}`,
    ...caExtensions.flatMap((e) => ['-addext', e]),
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  ]);
  openssl(['req', ...ec, '-subj', '/CN=*.devtool.test', '-keyout', 'wild.key', '-out', 'wild.csr']);
  writeFileSync(join(work, 'wild.ext'), 'subjectAltName=DNS:*.devtool.test\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\n');
  openssl('x509 -req -in wild.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile wild.ext -out wild.crt'.split(' '));
}

/** The certificate a TLS server presents for `host` at its address (SNI = host). */
function presented(host: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: 443, servername: host, ca: caPem }, () => {
      const raw = socket.getPeerX509Certificate();
      socket.end();
      if (raw) resolve(raw);
      else reject(new Error(`${host}: no certificate`));
    });
    socket.on('error', reject);
  });
}

/** An API object as plain data (the client's classes are not deep-equal to literals). */
const plain = (o: unknown): unknown => JSON.parse(JSON.stringify(o ?? null));

/** A user of the release's service, made as an operator does; their API token. */
function newUser(name: string): string {
  const made = spawnSync('bash', [join(repoRoot, 'scripts/service-user.sh'), name], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, DEVTOOL_SERVICE_NAMESPACE: RELEASE },
  });
  assert.equal(made.status, 0, made.stderr);
  return made.stdout.trim().split('\n').at(-1)!;
}

/** An Ingress of one rule for `host` (none: a rule for every host), as JSON for kubectl. */
function ingressFor(namespace: string, name: string, host?: string): string {
  const backend = { service: { name: 'web', port: { number: 80 } } };
  const rule = { ...(host ? { host } : {}), http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } };
  return JSON.stringify({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace },
    spec: { ingressClassName: 'traefik', rules: [rule] },
  });
}

/** The built CLI as the user logged in to the release's service. */
const devtool = (args: string[], env: Record<string, string> = {}, timeoutMs = 60_000) => runDevtool(args, { env: { ...sb.env, ...env }, cwd: app, timeoutMs });

before(async () => {
  const cluster = await ensureCluster();
  kubeconfig = cluster.kubeconfigPath;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  networking = kc.makeApiClient(k8s.NetworkingV1Api);
  operatorCertificates();
  caPem = readFileSync(caFile, 'utf8');
  script('cluster/traefik.sh', ['up', '--certificate', join(work, 'wild.crt'), '--key', join(work, 'wild.key')]);
  script('cluster/traefik.sh', ['names', 'add', HOST, new URL(ENDPOINT).host, new URL(PLAIN_ENDPOINT).host]);
  // The release namespace with the operator's certificate of the service host, before the chart.
  for (const name of [RELEASE, plainNamespace]) {
    await core.createNamespace({ body: { metadata: { name, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
  }
  await core.createNamespacedSecret({
    namespace: RELEASE,
    body: {
      metadata: { name: TLS_SECRET },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': readFileSync(join(work, 'wild.crt')).toString('base64'), 'tls.key': readFileSync(join(work, 'wild.key')).toString('base64') },
    },
  });
  script('scripts/service-up.sh', [], {
    DEVTOOL_SERVICE_RELEASE: RELEASE,
    DEVTOOL_SERVICE_INGRESS_CLASS: 'traefik',
    DEVTOOL_SERVICE_TLS_SECRET: TLS_SECRET,
    DEVTOOL_SERVICE_CA: caFile,
  });
});

after(async () => {
  if (!core) return;
  spawnSync('bash', [join(repoRoot, 'cluster/traefik.sh'), 'default', 'off']);
  const helm = spawnSync('bash', [join(repoRoot, 'cluster/helm.sh'), 'path'], { encoding: 'utf8' }).stdout.trim();
  spawnSync(helm, ['uninstall', RELEASE, '--namespace', RELEASE, '--wait', '--timeout', '2m'], { env: { ...process.env, KUBECONFIG: kubeconfig } });
  for (const owner of [user, other]) {
    const owned = await core.listNamespace({ labelSelector: `devtool.dev/owner=${owner}` }).catch(() => ({ items: [] }));
    for (const ns of owned.items) await core.deleteNamespace({ name: ns.metadata!.name! }).catch(() => {});
  }
  for (const name of [RELEASE, plainNamespace]) await core.deleteNamespace({ name }).catch(() => {});
  spawnSync('bash', [join(repoRoot, 'cluster/traefik.sh'), 'down']);
  rmSync(work, { recursive: true, force: true });
});

describe('the chart with ingress.enabled=false behind Traefik', () => {
  test("the service URL answers through Traefik with the operator's wildcard certificate, and announces the class and CA", async () => {
    const info = await whenAnswering(`${URL_}/api/v1/info`, caPem);
    const body = JSON.parse(info.body ?? '{}') as { ingressClass?: string; certificate?: string; endpointDomain?: string };
    assert.equal(body.ingressClass, 'traefik');
    assert.equal(body.certificate, caPem, 'the CA the operator gave, handed to clients');
    assert.equal(body.endpointDomain, 'devtool.test');
    const cert = await presented(HOST);
    assert.equal(cert.subjectAltName, 'DNS:*.devtool.test');
    assert.match(cert.issuer, new RegExp(`CN=e2e operator CA ${run}`));
    const ingress = await networking.readNamespacedIngress({ name: `${RELEASE}-service`, namespace: RELEASE });
    assert.equal(ingress.spec?.ingressClassName, 'traefik');
    assert.deepEqual(plain(ingress.spec?.tls), [{ hosts: [HOST], secretName: TLS_SECRET }]);
    // Traefik's class, not the cluster's default outside the one step that makes it so.
    const traefik = (await networking.listIngressClass()).items.find((c) => c.metadata?.name === 'traefik');
    assert.equal(traefik?.spec?.controller, 'traefik.io/ingress-controller');
    assert.equal(traefik?.metadata?.annotations?.['ingressclass.kubernetes.io/is-default-class'], undefined);
  });

  test('a user logs in with a token; the context keeps the class and the CA', () => {
    const token = newUser(user);
    sb = createSandbox();
    app = join(sb.root, 'app');
    mkdirSync(app);
    // The CA trusted the way a user trusts a private one: DEVTOOL_CA_CERT on the first login only.
    const use = devtool(['context', 'use', URL_, '--token', token], { DEVTOOL_CA_CERT: caFile });
    assert.equal(use.code, 0, use.stderr);
    assert.equal(use.stdout, `Using context ${URL_} as ${user}: namespace "${userNamespace}" @ ${URL_}\n`);
    const stored = JSON.parse(readFileSync(join(sb.devtoolHome, 'contexts.json'), 'utf8')) as {
      contexts: Record<string, { ingressClass?: string; certificate?: string; endpointDomain?: string }>;
    };
    const ctx = stored.contexts[URL_]!;
    assert.deepEqual([ctx.ingressClass, ctx.endpointDomain, ctx.certificate], ['traefik', 'devtool.test', caPem]);
  });

  test('a Compose app deploys; its endpoint answers through Traefik over TLS, and `devtool endpoints` prints it', { timeout: 600_000 }, async () => {
    assert.ok(sb, 'needs the login');
    writeFileSync(
      join(app, 'compose.yaml'),
      [
        'services:',
        '  web:',
        `    image: ${REGISTRY}/nginx:1`,
        '    ports: ["8080:80"]',
        '    entrypoint: ["/bin/sh", "-c"]',
        `    command: ["echo \\"traefik page ${run}\\" > /usr/share/nginx/html/index.html && exec nginx -g 'daemon off;'"]`,
        '',
      ].join('\n'),
    );
    const started = Date.now();
    const deploy = devtool(['deploy', '--name', 'shop', '--wait', '--timeout', '3m'], {}, 240_000);
    assert.equal(deploy.code, 0, deploy.stderr);
    assert.equal(deploy.stdout, `${ENDPOINT}\n`);
    const ingress = await networking.readNamespacedIngress({ name: 'web', namespace: userNamespace });
    assert.equal(ingress.spec?.ingressClassName, 'traefik');
    assert.deepEqual(plain(ingress.spec?.tls), [{ hosts: [new URL(ENDPOINT).host] }]);
    const page = await whenAnswering(ENDPOINT, caPem);
    console.log(`deploy to an answering endpoint through Traefik: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.equal(page.body, `traefik page ${run}\n`);
    assert.equal((await presented(new URL(ENDPOINT).host)).subjectAltName, 'DNS:*.devtool.test', "Traefik's default certificate");
    const listed = devtool(['endpoints', '--name', 'shop', '--output', 'json']);
    assert.equal(listed.code, 0, listed.stderr);
    const urls = JSON.parse(listed.stdout) as string[];
    assert.deepEqual(urls, [ENDPOINT]);
    for (const url of urls) assert.equal((await httpsGet(url, caPem)).status, 200, url);
  });

  test("while Traefik's class is the cluster's default, a class-less Ingress (a deploy naming no class) goes to Traefik", { timeout: 600_000 }, async () => {
    // The operator's own kubeconfig and no class anywhere: the Ingress names none.
    const admin = createSandbox(readFileSync(kubeconfig, 'utf8'));
    const plainApp = join(admin.root, 'app');
    mkdirSync(plainApp);
    writeFileSync(join(plainApp, 'compose.yaml'), readFileSync(join(app, 'compose.yaml'), 'utf8'));
    const env = { ...admin.env, DEVTOOL_ENDPOINT_DOMAIN: 'devtool.test' };
    const dry = runDevtool(['deploy', '--dry-run', '-n', plainNamespace, '--name', 'plain'], { env, cwd: plainApp });
    assert.equal(dry.code, 0, dry.stderr);
    assert.doesNotMatch(dry.stdout, /ingressClassName/);
    script('cluster/traefik.sh', ['default', 'on']);
    try {
      const r = runDevtool(['deploy', '-n', plainNamespace, '--name', 'plain', '--wait', '--timeout', '3m'], { env, cwd: plainApp, timeoutMs: 240_000 });
      assert.equal(r.code, 0, r.stderr);
    } finally {
      script('cluster/traefik.sh', ['default', 'off']);
    }
    // The admission plugin named the newest default class when the Ingress was made.
    const ingress = await networking.readNamespacedIngress({ name: 'web', namespace: plainNamespace });
    assert.equal(ingress.spec?.ingressClassName, 'traefik');
    assert.equal((await whenAnswering(PLAIN_ENDPOINT, caPem)).body, `traefik page ${run}\n`);
  });

  test('an endpoint whose pods are scaled to zero (a sleeping preview) answers 503 and wakes nothing', { timeout: 300_000 }, async () => {
    await apps.patchNamespacedDeploymentScale(
      { name: 'web', namespace: plainNamespace, body: { spec: { replicas: 0 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    let last: Fetched = {};
    await waitFor(
      `${PLAIN_ENDPOINT} to answer 503`,
      async () => {
        last = await httpsGet(PLAIN_ENDPOINT, caPem);
        return last.status === 503;
      },
      120_000,
    );
    const scale = await apps.readNamespacedDeploymentScale({ name: 'web', namespace: plainNamespace });
    // The API leaves a zero out of the answer.
    assert.equal(scale.spec?.replicas ?? 0, 0, `still asleep after ${JSON.stringify(last)}`);
  });

  test("a user's Ingress naming another namespace's endpoint, the service's host or no host is refused at the API", { timeout: 300_000 }, async () => {
    assert.ok(sb, 'needs the login');
    // Behind another controller nobody checks hosts when serving: the chart's admission policy does.
    const theirs = createSandbox();
    const otherDevtool = (args: string[]) => runDevtool(args, { env: theirs.env, cwd: theirs.root, timeoutMs: 60_000 });
    assert.equal(otherDevtool(['context', 'use', URL_, '--token', newUser(other)]).code, 0);
    // Mallory's short namespace, and the other user's longer one: web-b-<short> is web of b-<short>, and web-b of <short>.
    const short = `s${run}`;
    const long = `b-${short}`;
    for (const [cli, ns] of [
      [devtool, short],
      [otherDevtool, long],
    ] as const) {
      const made = cli(['namespace', 'create', ns]);
      assert.equal(made.code, 0, made.stderr);
      assert.equal(cli(['kubeconfig']).code, 0);
    }
    const labels = (await core.readNamespace({ name: short })).metadata?.labels ?? {};
    assert.equal(labels['devtool.dev/service'], RELEASE, 'the service names itself on the namespaces it makes');

    const attacks: [string, string, string | undefined, RegExp][] = [
      [
        "another namespace's endpoint",
        userNamespace,
        `web-${plainNamespace}.devtool.test`,
        new RegExp(`the host web-${plainNamespace}.devtool.test is not namespace ${userNamespace}'s`),
      ],
      ["the service's own host", userNamespace, HOST, new RegExp(`the host ${HOST} is not namespace ${userNamespace}'s`)],
      ['no host (every host)', userNamespace, undefined, /names its host \(a rule without one would catch every host\)/],
      ['a name the longer namespace owns', short, `web-${long}.devtool.test`, new RegExp(`the host web-${long}.devtool.test is namespace ${long}'s endpoint`)],
    ];
    for (const [what, ns, host, refusal] of attacks) {
      const r = kubectlAs(sb, ['apply', '-f', '-'], ingressFor(ns, 'taken', host));
      assert.notEqual(r.code, 0, `${what}: admitted`);
      assert.match(r.stderr, refusal, what);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line`);
    }
    // What each may name: its own endpoints, any service name in them.
    for (const [sandbox, ns, host] of [
      [sb, short, `my-api-${short}.devtool.test`],
      [theirs, long, `web-${long}.devtool.test`],
    ] as const) {
      const r = kubectlAs(sandbox, ['apply', '-f', '-'], ingressFor(ns, 'own', host));
      assert.equal(r.code, 0, `${host}: ${r.stderr}`);
    }
    assert.equal(
      (await networking.listNamespacedIngress({ namespace: userNamespace })).items.some((i) => i.metadata?.name === 'taken'),
      false,
    );
  });
});
