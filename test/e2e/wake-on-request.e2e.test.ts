/**
 * Wake on request, end to end, on the service its chart installed (installed-service.ts): a plain
 * user deploys a Compose application of two services (web answers what api answers), a request to
 * its endpoint is recorded as LAST_REQUEST on the namespace, `devtool namespace sleep` puts it to
 * sleep, and then ONE HTTPS request to the endpoint answers the waking page (503, a page that
 * reloads itself) and wakes it: the application answers again without any other command. Another
 * plain user can wake nothing: neither straight at the service's waking page with forged headers
 * (no key, a wrong key), nor through an Ingress of its own namespace that points at it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { FRONT_DOOR_KEY_HEADER, WAKE_HOST_HEADER, WAKE_NAMESPACE_HEADER, WAKING_PATH } from '../../api/front-door.ts';
import { LAST_REQUEST, SLEEPING_SINCE, WAKING_SINCE } from '../../api/namespace-sleep.ts';
import { REGISTRY } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool, type Sandbox } from './cli.ts';
import { httpsGet, type InstalledService, installedService, kubectlAs, SERVICE_NAMESPACE, whenAnswering } from './installed-service.ts';

const run = randomBytes(3).toString('hex');
const owner = `wake${run}`;
const intruder = `wakei${run}`;
const shop = `wake-${run}`;
const relay = `wake-relay-${run}`;
const endpoint = `https://web-${shop}.devtool.test`;
const apiPage = `api page ${run}\n`;

let svc: InstalledService;
let core: k8s.CoreV1Api;
let a: Sandbox;
let b: Sandbox;

const devtool = (sb: Sandbox, args: string[], opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) =>
  runDevtool(args, { env: { ...sb.env, ...opts.env }, ...(opts.cwd ? { cwd: opts.cwd } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });

/** One HTTPS request with these headers, trusting the front door's CA: status and body; never throws. */
function send(url: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; body: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request(url, { method, ca: svc.caPem, timeout: 20_000, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, body: '', error: `${e.code ?? ''} ${e.message}` }));
    req.end();
  });
}

async function annotations(namespace: string): Promise<Record<string, string>> {
  return (await core.readNamespace({ name: namespace })).metadata?.annotations ?? {};
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Whether every front door's controller has logged that it sends the namespace's hosts to the waking page (ingress/controller.ts). */
async function frontDoorsSendToWakingPage(namespace: string, rest: 'sleeping' | 'waking'): Promise<boolean> {
  const pods = (await core.listNamespacedPod({ namespace: SERVICE_NAMESPACE, labelSelector: 'app.kubernetes.io/component=front-door' })).items;
  for (const p of pods) {
    const log = await core.readNamespacedPodLog({ name: p.metadata!.name!, namespace: SERVICE_NAMESPACE, container: 'controller', sinceSeconds: 600 });
    const last = log
      .split('\n')
      .filter((l) => l.includes('sending to the waking page the hosts of:'))
      .at(-1);
    if (!last?.includes(`${namespace} (${rest})`)) return false;
  }
  return pods.length > 0;
}

/** The namespace's Deployments' ready replicas, by name. */
async function readyReplicas(namespace: string): Promise<Record<string, number>> {
  const apps = svc.kc.makeApiClient(k8s.AppsV1Api);
  const list = (await apps.listNamespacedDeployment({ namespace })).items;
  return Object.fromEntries(list.map((d) => [d.metadata!.name!, d.status?.readyReplicas ?? 0]));
}

describe('wake on request: one request to a sleeping namespace’s endpoint wakes it', () => {
  before(async () => {
    svc = await installedService();
    core = svc.core;
    const tokenA = await svc.createUser(owner);
    const tokenB = await svc.createUser(intruder);
    a = createSandbox();
    b = createSandbox();
    for (const [sb, token] of [
      [a, tokenA],
      [b, tokenB],
    ] as const) {
      const r = devtool(sb, ['context', 'use', svc.url, '--token', token], { env: { DEVTOOL_CA_CERT: svc.caFile } });
      assert.equal(r.code, 0, r.stderr);
    }
    for (const [sb, ns] of [
      [a, shop],
      [b, relay],
    ] as const) {
      const r = devtool(sb, ['namespace', 'create', ns]);
      assert.equal(r.code, 0, r.stderr);
      await svc.markForCleanup(ns);
    }
    const d = devtool(a, ['deploy', '--name', 'web', '--wait', '--timeout', '3m'], {
      cwd: join(repoRoot, 'test/e2e/fixtures/wake'),
      env: { REGISTRY, PAGE_TOKEN: run },
      timeoutMs: 240_000,
    });
    assert.equal(d.code, 0, `deploy failed:\n${d.stdout}\n${d.stderr}`);
    const first = await whenAnswering(`${endpoint}/`, svc.caPem, 90_000);
    assert.equal(first.body, apiPage);
  });

  after(async () => {
    if (svc) await svc.removeUsers();
  });

  test('a request to the endpoint is recorded as LAST_REQUEST on the namespace', { timeout: 60_000 }, async () => {
    // The front door writes at most once a minute: a value from the deploy's requests may be there already.
    const before = Date.parse((await annotations(shop))[LAST_REQUEST] ?? '') || 0;
    const asked = Date.now();
    assert.equal((await httpsGet(`${endpoint}/`, svc.caPem)).status, 200);
    const recorded = await until('LAST_REQUEST recorded', 40_000, async () => {
      const at = Date.parse((await annotations(shop))[LAST_REQUEST] ?? '');
      return Number.isNaN(at) ? undefined : at;
    });
    if (before === 0) {
      assert.ok(recorded >= asked - 2_000 && recorded <= Date.now(), `LAST_REQUEST ${new Date(recorded).toISOString()} is the request's time`);
    } else {
      assert.ok(recorded >= before, 'LAST_REQUEST never goes back');
    }
    // The intruder's namespace had no request: nothing recorded there.
    assert.equal((await annotations(relay))[LAST_REQUEST], undefined);
  });

  test('the front door may change only LAST_REQUEST, and only on the service’s namespaces', () => {
    // As the front door's ServiceAccount (impersonated with the cluster's admin kubeconfig).
    const asFrontDoor = (namespace: string, patch: unknown) =>
      spawnSync(
        'bash',
        [
          join(repoRoot, 'cluster/cluster.sh'),
          'kubectl',
          `--as=system:serviceaccount:${SERVICE_NAMESPACE}:devtool-front-door`,
          'patch',
          'namespace',
          namespace,
          '--type=merge',
          '-p',
          JSON.stringify(patch),
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
    const ok = asFrontDoor(shop, { metadata: { annotations: { [LAST_REQUEST]: new Date().toISOString() } } });
    assert.equal(ok.status, 0, ok.stderr);
    for (const [namespace, patch, refusal] of [
      [shop, { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } }, 'changes no label'],
      [shop, { metadata: { annotations: { [SLEEPING_SINCE]: new Date().toISOString() } } }, 'changes only the annotation'],
      ['kube-system', { metadata: { annotations: { [LAST_REQUEST]: new Date().toISOString() } } }, 'writes only namespaces its service made'],
    ] as const) {
      const r = asFrontDoor(namespace, patch);
      assert.notEqual(r.status, 0, `${namespace} ${JSON.stringify(patch)} was let through`);
      assert.match(r.stderr, new RegExp(`the front door ${refusal}`));
    }
  });

  test('devtool namespace sleep: the front door sends the endpoint to the waking page', { timeout: 120_000 }, async () => {
    const r = devtool(a, ['namespace', 'sleep', shop], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.ok((await annotations(shop))[SLEEPING_SINCE], 'SLEEPING_SINCE set');
    await until('the front doors route the namespace to the waking page', 30_000, async () =>
      (await frontDoorsSendToWakingPage(shop, 'sleeping')) ? true : undefined,
    );
    await until('no pod ready', 60_000, async () => (JSON.stringify(await readyReplicas(shop)) === '{"api":0,"web":0}' ? true : undefined));
  });

  test('another user wakes nothing: forged headers straight at the waking page are refused', { timeout: 60_000 }, async () => {
    const forged = { [WAKE_NAMESPACE_HEADER]: shop, [WAKE_HOST_HEADER]: `web-${shop}.devtool.test` };
    for (const key of [undefined, 'wrong', 'x'.repeat(48)]) {
      for (const method of ['GET', 'POST']) {
        const r = await send(`${svc.url}${WAKING_PATH}`, { ...forged, ...(key ? { [FRONT_DOOR_KEY_HEADER]: key } : {}) }, method);
        assert.equal(r.status, 403, `${method} with key ${key}: ${JSON.stringify(r)}`);
        assert.equal(r.body, 'refused: only the front door asks for a wake\n');
      }
    }
    const notes = await annotations(shop);
    assert.ok(notes[SLEEPING_SINCE], 'still asleep');
    assert.equal(notes[WAKING_SINCE], undefined, 'no wake started');
  });

  test('another user wakes nothing through an Ingress of its own namespace pointing at the waking page', { timeout: 300_000 }, async () => {
    // An ExternalName Service naming the devtool service: the front door does not serve it.
    const yaml = `apiVersion: v1
kind: Service
metadata: {name: door}
spec: {type: ExternalName, externalName: devtool-service.devtool.svc.cluster.local}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: door}
spec:
  rules:
    - host: door-${relay}.devtool.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: door, port: {number: 80}}}}
`;
    assert.equal(devtool(b, ['kubeconfig']).code, 0);
    const applied = kubectlAs(b, ['apply', '-n', relay, '-f', '-'], yaml);
    assert.equal(applied.code, 0, applied.stderr);
    // A relay pod of its own, proxying its endpoint to the service's waking page with the client's headers.
    const d = devtool(b, ['deploy', '--name', 'relay', '--wait', '--timeout', '3m'], {
      cwd: join(repoRoot, 'test/e2e/fixtures/wake-intruder'),
      env: { REGISTRY },
      timeoutMs: 240_000,
    });
    assert.equal(d.code, 0, `deploy failed:\n${d.stdout}\n${d.stderr}`);
    const forged = { [WAKE_NAMESPACE_HEADER]: shop, [WAKE_HOST_HEADER]: `web-${shop}.devtool.test`, [FRONT_DOOR_KEY_HEADER]: 'guessed' };
    const viaRelay = await until('the relay endpoint answers', 90_000, async () => {
      const r = await send(`https://relay-${relay}.devtool.test/`, forged);
      return r.status === 0 || r.status === 404 ? undefined : r;
    });
    // Refused by the service (403) or not let through to it at all (the chart's NetworkPolicy: a gateway error).
    assert.ok([403, 502, 504].includes(viaRelay.status), `through the relay: ${JSON.stringify(viaRelay)}`);
    if (viaRelay.status === 403) assert.equal(viaRelay.body, 'refused: only the front door asks for a wake\n');
    console.log(
      `through the relay: HTTP ${viaRelay.status} (${viaRelay.status === 403 ? 'the service refused it' : 'the NetworkPolicy kept it from the service'})`,
    );
    const viaExternalName = await send(`https://door-${relay}.devtool.test/`, forged);
    assert.notEqual(viaExternalName.status, 503, `the ExternalName Ingress is not served: ${JSON.stringify(viaExternalName)}`);
    assert.ok(viaExternalName.error || viaExternalName.status === 404, `the ExternalName Ingress is not served: ${JSON.stringify(viaExternalName)}`);
    const notes = await annotations(shop);
    assert.ok(notes[SLEEPING_SINCE], 'still asleep');
    assert.equal(notes[WAKING_SINCE], undefined, 'no wake started');
    assert.deepEqual(await readyReplicas(shop), { api: 0, web: 0 });
  });

  test('ONE request answers the waking page and wakes the namespace; the application answers again', { timeout: 180_000 }, async () => {
    const asked = Date.now();
    const page = await send(`${endpoint}/`, { accept: 'text/html' });
    assert.equal(page.status, 503, JSON.stringify(page));
    assert.match(page.body, /<meta http-equiv="refresh" content="5">/);
    assert.match(page.body, new RegExp(`The namespace <code>${shop}</code> was asleep and is waking up`));
    assert.match(page.body, /This page reloads itself every 5 seconds/);
    // No other command: what a browser's reloads would see, the application's page once both are up.
    const answered = await whenAnswering(`${endpoint}/`, svc.caPem, 120_000);
    assert.equal(answered.body, apiPage);
    console.log(`wake on request: the application answered ${((Date.now() - asked) / 1000).toFixed(1)} s after the one request`);
    await until('WAKING_SINCE removed', 60_000, async () => ((await annotations(shop))[WAKING_SINCE] === undefined ? true : undefined));
    assert.equal((await annotations(shop))[SLEEPING_SINCE], undefined);
  });
});
