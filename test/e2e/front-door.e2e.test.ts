/**
 * The front door on the local cluster: `npm run service:up` installs the chart (Caddy and the
 * ingress controller on the node's 80/443, the project's CA, names under devtool.test resolving to
 * the node from here and from pods); a Compose application deployed with a public port then
 * answers at the URL `devtool endpoints` prints, over TLS trusted through that CA only, from Node,
 * curl and Chromium, and its Ingress shows the node's address. A restarted proxy gets its routes
 * back. A host that is no Ingress rule gets no certificate, and neither does the application's host
 * once `destroy` removed its Ingress. The chart lints, renders nothing of the front door with
 * ingress.enabled=false, and keeps its CA across an upgrade that gives none.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { repoRoot, runDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, execInPod, pathWithHelm, REGISTRY, runningPod, type ClusterSandbox } from './cluster.ts';
import { waitFor } from './wait.ts';
import { launchBrowser, visit } from './browser.ts';
import { CA_FILE, type Fetched, httpsGet, installedService, serviceUp } from './installed-service.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'front-door');
const DOMAIN = 'devtool.test';
const ENV = 'fd';
const token = `t${Date.now().toString(36)}`;
let s: ClusterSandbox;
let serviceUrl: string;
let appUrl: string;
let ca: string;

before(async () => {
  const svc = await installedService();
  serviceUrl = svc.url;
  ca = svc.caPem;
  s = await clusterSandbox('e2e-front-door');
});
after(async () => {
  if (s) await deleteNamespace(s);
});

function devtool(args: string[], timeoutMs = 60_000) {
  return runDevtool(args, { cwd: fixture, timeoutMs, env: { ...s.env, REGISTRY, PAGE_TOKEN: token, DEVTOOL_ENDPOINT_DOMAIN: DOMAIN } });
}

/** GET over HTTPS with Node, trusting `trust` only (none: Node's default roots). */
const get = (url: string, trust?: string) => httpsGet(url, trust);

function curl(args: string[]) {
  return spawnSync('curl', ['-sS', '--max-time', '10', ...args], { encoding: 'utf8' });
}

test('service:up prints the front door URL, which answers over TLS signed by the project CA', async () => {
  assert.equal(serviceUrl, 'https://devtool.devtool.test');
  // The service's own /healthz, through its Ingress (service-install.e2e.test.ts tests the service).
  const r = await get(`${serviceUrl}/healthz`, ca);
  assert.deepEqual(r, { status: 200, body: '{"ok":true}' });
});

test('a deployed Compose endpoint answers with its page at the URL `devtool endpoints` prints', { timeout: 400_000 }, async () => {
  const d = devtool(['deploy', '--name', ENV, '--namespace', s.namespace, '--wait', '--timeout', '3m'], 240_000);
  assert.equal(d.code, 0, `deploy failed:\n${d.stderr}`);
  const e = devtool(['endpoints', '--name', ENV, '--namespace', s.namespace, '--output', 'json']);
  assert.equal(e.code, 0, e.stderr);
  const urls = (JSON.parse(e.stdout) as (string | { url: string })[]).map((u) => (typeof u === 'string' ? u : u.url));
  assert.deepEqual(urls, [`https://web-${s.namespace}.${DOMAIN}`]);
  appUrl = urls[0]!;
  // The controller follows the watch: the route and its certificate follow within seconds.
  let last: Fetched = {};
  await waitFor(
    `${appUrl} answers`,
    async () => {
      last = await get(appUrl, ca);
      return last.status === 200;
    },
    60_000,
  ).catch(() => assert.fail(`${appUrl} never answered 200: ${JSON.stringify(last)}`));
  assert.equal(last.body, `front door page ${token}\n`);
  const c = curl(['--cacert', CA_FILE, appUrl]);
  assert.equal(c.status, 0, c.stderr);
  assert.equal(c.stdout, `front door page ${token}\n`);
  // The Ingress shows where it is served: the node's address, as the endpoint's name resolves.
  const net = s.kc.makeApiClient(k8s.NetworkingV1Api);
  const node = (await lookup(new URL(appUrl).hostname, { family: 4 })).address;
  let address: string | undefined;
  await waitFor(
    `the Ingress shows the address ${node}`,
    async () => {
      const ings = (await net.listNamespacedIngress({ namespace: s.namespace })).items;
      address = ings[0]?.status?.loadBalancer?.ingress?.[0]?.ip;
      return address === node;
    },
    30_000,
  ).catch(() => assert.fail(`Ingress address ${address}, want ${node}`));
});

test('a restarted proxy gets its routes back from the controller', { timeout: 120_000 }, async () => {
  assert.ok(appUrl, 'needs the deployed endpoint');
  const pod = await runningPod(s.core, 'devtool', 'app.kubernetes.io/component=front-door');
  const restarts = async () =>
    (await s.core.readNamespacedPod({ name: pod, namespace: 'devtool' })).status?.containerStatuses?.find((c) => c.name === 'proxy')?.restartCount ?? 0;
  const before = await restarts();
  // Caddy is PID 1 of its container: SIGTERM stops it, the kubelet starts it again with only its admin API.
  await execInPod(s.kc, 'devtool', pod, ['sh', '-c', 'kill 1'], 'proxy').catch(() => undefined);
  await waitFor('the proxy container restarted', async () => (await restarts()) > before, 60_000);
  let last: Fetched = {};
  await waitFor(
    `${appUrl} answers again`,
    async () => {
      last = await get(appUrl, ca);
      return last.status === 200;
    },
    45_000,
  ).catch(() => assert.fail(`${appUrl} not served after the proxy restarted: ${JSON.stringify(last)}`));
  assert.equal(last.body, `front door page ${token}\n`);
});

test('without the CA the TLS handshake is refused, by Node and by curl', async () => {
  assert.ok(appUrl, 'needs the deployed endpoint');
  const r = await get(appUrl);
  assert.match(r.error ?? '', /UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN|unable to get local issuer/, JSON.stringify(r));
  const c = curl([appUrl]);
  assert.equal(c.status, 60, `curl without the CA: exit ${c.status} ${c.stdout}${c.stderr}`); // 60: peer certificate cannot be authenticated
});

test('a host that is no Ingress rule gets no certificate', async () => {
  const stranger = `nobody-${s.namespace}.${DOMAIN}`;
  assert.equal((await lookup(stranger)).address, (await lookup(new URL(serviceUrl).hostname)).address, 'it resolves like every name of the domain');
  const r = await get(`https://${stranger}/`, ca);
  assert.equal(r.status, undefined, `no page for ${stranger}: ${JSON.stringify(r)}`);
  assert.match(r.error ?? '', /alert internal error|ECONNRESET|EPROTO/, JSON.stringify(r));
  const c = curl(['--cacert', CA_FILE, `https://${stranger}/`]);
  assert.equal(c.status, 35, `curl to ${stranger}: exit ${c.status} ${c.stderr}`); // 35: TLS handshake failed
});

test('names of the endpoint domain resolve to the node from inside a pod too', { timeout: 60_000 }, async () => {
  assert.ok(appUrl, 'needs the deployed endpoint');
  const pod = await runningPod(s.core, s.namespace, 'devtool.dev/service=web');
  const host = new URL(appUrl).hostname;
  const r = await execInPod(s.kc, s.namespace, pod, ['getent', 'ahostsv4', host]);
  assert.equal(r.code, 0, r.stderr);
  const fromHere = (await lookup(host, { family: 4 })).address;
  assert.equal(r.stdout.split(/\s+/)[0], fromHere, r.stdout);
});

test('Chromium finds the endpoint by name and shows its page, trusting the CA; without it, an invalid authority', { timeout: 300_000 }, async () => {
  assert.ok(appUrl, 'needs the deployed endpoint');
  const trusting = await launchBrowser({ caPem: readFileSync(CA_FILE, 'utf8') });
  try {
    const page = await trusting.browser.newPage();
    await visit(page, appUrl);
    assert.match(await page.content(), new RegExp(`front door page ${token}`));
  } finally {
    await trusting.close();
  }
  const stranger = await launchBrowser();
  try {
    const page = await stranger.browser.newPage();
    await assert.rejects(visit(page, appUrl), /ERR_CERT_AUTHORITY_INVALID/);
  } finally {
    await stranger.close();
  }
});

test('destroy removes the Ingress, and the front door stops serving its host', { timeout: 180_000 }, async () => {
  assert.ok(appUrl, 'needs the deployed endpoint');
  const d = devtool(['destroy', '--name', ENV, '--namespace', s.namespace], 120_000);
  assert.equal(d.code, 0, d.stderr);
  let last: Fetched = {};
  await waitFor(
    `${appUrl} is not served`,
    async () => {
      last = await get(appUrl, ca);
      return last.status === undefined;
    },
    60_000,
  ).catch(() => assert.fail(`${appUrl} still served after destroy: ${JSON.stringify(last)}`));
});

function helm(args: string[]) {
  return spawnSync('helm', args, { encoding: 'utf8', env: { ...process.env, PATH: pathWithHelm(), KUBECONFIG: s.cluster.kubeconfigPath }, timeout: 300_000 });
}

test('helm lint passes; with ingress.enabled=false the chart installs no proxy, class or CA', () => {
  const lint = helm(['lint', join(repoRoot, 'chart')]);
  assert.equal(lint.status, 0, lint.stdout + lint.stderr);
  // The front door alone (the service's objects: service-install.e2e.test.ts).
  const on = helm(['template', 'x', join(repoRoot, 'chart'), '--set', 'ingress.controller.image=c', '--set', 'service.enabled=false']);
  assert.equal(on.status, 0, on.stderr);
  const kinds = (out: string) => [...out.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]).sort();
  assert.deepEqual(kinds(on.stdout), [
    'ClusterRole',
    'ClusterRoleBinding',
    'DaemonSet',
    'IngressClass',
    'Role',
    'RoleBinding',
    'Secret',
    'ServiceAccount',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ]);
  const off = helm(['template', 'x', join(repoRoot, 'chart'), '--set', 'ingress.enabled=false', '--set', 'service.enabled=false']);
  assert.equal(off.status, 0, off.stderr);
  assert.deepEqual(kinds(off.stdout), []);
});

test('an upgrade that gives no CA keeps the installed one and the front door key (lookup), and the front door keeps answering', {
  timeout: 360_000,
}, async () => {
  const frontDoorPods = async () =>
    (await s.core.listNamespacedPod({ namespace: 'devtool', labelSelector: 'app.kubernetes.io/component=front-door' })).items.map((p) => p.metadata?.uid);
  const podsBefore = await frontDoorPods();
  const frontDoorKey = async () => (await s.core.readNamespacedSecret({ name: 'devtool-front-door-key', namespace: 'devtool' })).data?.['key'];
  const keyBefore = await frontDoorKey();
  assert.ok(keyBefore, 'the front door key exists');
  const up = helm(['upgrade', 'devtool', join(repoRoot, 'chart'), '-n', 'devtool', '--reuse-values', '--set', 'ca.certificate=', '--set', 'ca.key=', '--wait']);
  assert.equal(up.status, 0, up.stderr);
  try {
    const secret = await s.core.readNamespacedSecret({ name: 'devtool-front-door-ca', namespace: 'devtool' });
    assert.equal(Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64').toString(), ca);
    assert.deepEqual(await get(`${serviceUrl}/healthz`, ca), { status: 200, body: '{"ok":true}' });
    assert.deepEqual(await frontDoorPods(), podsBefore, 'the same CA restarts nothing');
    assert.equal(await frontDoorKey(), keyBefore, 'the front door key is kept (lookup)');
  } finally {
    // Back to the values service:up gave (the CA from its file).
    serviceUp();
  }
});
