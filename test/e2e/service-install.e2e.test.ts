/**
 * The devtool service installed by its chart on the local cluster, reached as users reach it:
 * `npm run service:up` (two ready replicas behind the front door, the CA handed out by
 * /api/v1/info), `npm run service:user` (an admin and a user; a taken name refused in one line),
 * `devtool context use https://devtool.devtool.test --token` through the real ingress, a request
 * burst from parallel clients while a service pod is deleted (nothing lost, the other replica takes
 * over), the same during a rolling update, and an upgrade with the same values that restarts nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool } from './cli.ts';
import { burst, call, describeBurst } from './burst.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';
import { waitFor } from './wait.ts';

const URL_ = 'https://devtool.devtool.test';
const NS = 'devtool';
const SERVICE_PODS = 'app.kubernetes.io/component=service';
const CA_FILE = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');
const run = randomBytes(3).toString('hex');
const admin = `e2eadm${run}`;
const user = `e2eusr${run}`;

let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let kubeconfigPath: string;
let ca: string;
const tokens: Record<string, string> = {};

function serviceUp() {
  const started = Date.now();
  const r = spawnSync('bash', [join(repoRoot, 'scripts/service-up.sh')], { encoding: 'utf8', timeout: 1_500_000 });
  assert.equal(r.status, 0, `service-up failed:\n${r.stderr}`);
  console.log(`service:up took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return r.stdout.trim().split('\n').at(-1);
}

function serviceUser(...args: string[]) {
  return spawnSync('npm', ['run', '--silent', 'service:user', '--', ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
}

/** The service's pods: name, uid, ready, terminating. */
async function servicePods() {
  const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: SERVICE_PODS })).items;
  return pods.map((p) => ({
    name: p.metadata!.name!,
    uid: p.metadata!.uid!,
    ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    terminating: !!p.metadata?.deletionTimestamp,
  }));
}

async function twoReadyReplicas(): Promise<boolean> {
  const pods = await servicePods();
  return pods.length === 2 && pods.every((p) => p.ready && !p.terminating);
}

before(async () => {
  ({ kubeconfigPath } = await ensureCluster());
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  assert.equal(serviceUp(), URL_, 'the last line of service:up is the service URL');
  ca = readFileSync(CA_FILE, 'utf8');
  // When service:up rolled out a new image, the old pods are still in their grace period (out of
  // the Service, so not serving): the tests below count the service's pods.
  await waitFor('the replaced service pods gone', twoReadyReplicas, 90_000);
});

after(async () => {
  if (!core) return;
  for (const name of [admin, user]) {
    await core.deleteNamespace({ name: `${name}-devtool` }).catch(() => {});
    // Its token Secrets are owned by the ServiceAccount: the garbage collector removes them.
    await core.deleteNamespacedServiceAccount({ name: `user-${name}`, namespace: NS }).catch(() => {});
  }
});

describe('the service installed by its chart', () => {
  test('two ready replicas answer through the front door, and /api/v1/info hands out the CA', async () => {
    const deploy = await apps.readNamespacedDeployment({ name: 'devtool-service', namespace: NS });
    assert.equal(deploy.status?.readyReplicas, 2);
    assert.ok(await twoReadyReplicas(), JSON.stringify(await servicePods()));
    const c = spawnSync('curl', ['-sS', '--max-time', '10', '--cacert', CA_FILE, `${URL_}/api/v1/info`], { encoding: 'utf8' });
    assert.equal(c.status, 0, c.stderr);
    const info = JSON.parse(c.stdout) as { certificate?: string; endpointDomain?: string; registry?: string; capabilities?: string[] };
    assert.equal(info.certificate, ca);
    assert.equal(info.endpointDomain, 'devtool.test');
    assert.equal(info.registry, 'localhost:5000');
  });

  test('service:user makes an admin and a user and prints each token last; a taken name is one line and exit 1', async () => {
    for (const [name, flags] of [
      [admin, ['--admin']],
      [user, []],
    ] as const) {
      const r = serviceUser(name, ...flags);
      assert.equal(r.status, 0, r.stderr);
      const token = r.stdout.trim().split('\n').at(-1)!;
      assert.match(token, /^dvt_[A-Za-z0-9_-]{43}$/);
      tokens[name] = token;
      // Labelled as the tests' own: an interrupted run's are deleted by the next (scripts/test.sh).
      const mark = { metadata: { labels: { [E2E_NAMESPACE_LABEL]: 'true' } } };
      const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
      await core.patchNamespace({ name: `${name}-devtool`, body: mark }, merge);
      await core.patchNamespacedServiceAccount({ name: `user-${name}`, namespace: NS, body: mark }, merge);
    }
    const sa = await core.readNamespacedServiceAccount({ name: `user-${admin}`, namespace: NS });
    assert.equal(sa.metadata?.labels?.['devtool.dev/admin'], 'true');
    const taken = serviceUser(user);
    assert.equal(taken.status, 1);
    assert.equal(taken.stdout, '');
    assert.equal(taken.stderr, `service:user: user ${user} already exists\n`);
    const bad = serviceUser('Not_A_Name');
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr.split('\n').length, 2, `one line: ${bad.stderr}`);
    assert.match(bad.stderr, /^service:user: invalid user name "Not_A_Name"/);
  });

  test('`devtool context use URL --token` works over the ingress; `context show` is the service context', () => {
    assert.ok(tokens[user], 'needs the user');
    const sb = createSandbox();
    const env = { ...sb.env, NODE_EXTRA_CA_CERTS: CA_FILE };
    const use = runDevtool(['context', 'use', URL_, '--token', tokens[user]!], { env, timeoutMs: 30_000 });
    assert.equal(use.code, 0, use.stderr);
    assert.equal(use.stdout, `Using context ${URL_} as ${user}: namespace "${user}-devtool" @ ${URL_}\n`);
    const show = runDevtool(['context', 'show'], { env });
    assert.equal(show.code, 0, show.stderr);
    const shown = JSON.parse(show.stdout) as { name: string; isDevtool: boolean; namespace: string; registry: string; token: string };
    assert.equal(shown.name, URL_);
    assert.equal(shown.isDevtool, true);
    assert.equal(shown.namespace, `${user}-devtool`);
    assert.equal(shown.registry, 'localhost:5000');
    assert.equal(shown.token, 'REDACTED');
  });

  /** Every token created during a burst is listed afterwards. */
  async function assertListed(token: string, created: string[]) {
    const listed = await call(URL_, new Agent({ ca }), 'GET', '/api/v1/tokens', token);
    assert.equal(listed.status, 200, listed.body);
    const ids = new Set((JSON.parse(listed.body!) as { tokens: { id: string }[] }).tokens.map((t) => t.id));
    assert.deepEqual(
      created.filter((id) => !ids.has(id)),
      [],
      'every token created during the burst is listed',
    );
  }

  test('a burst of requests from parallel clients while a service pod is deleted: nothing lost, the other replica takes over', {
    timeout: 180_000,
  }, async () => {
    const token = tokens[user];
    assert.ok(token, 'needs the user');
    assert.ok(await twoReadyReplicas(), 'starts with two ready replicas');
    const victim = (await servicePods())[0]!;
    const started = Date.now();
    let goneAt = 0;
    // 200 GET /me and 20 token creations from 10 clients over ~14 s: the deletion, the pod's
    // graceful shutdown and its replacement happen mid-burst.
    const [r] = await Promise.all([
      burst({ base: URL_, ca, token, user, gets: 200, tokens: 20, tokenPrefix: `burst-${run}`, clients: 10, pauseMs: 600 }),
      (async () => {
        await new Promise((res) => setTimeout(res, 2_000));
        await core.deleteNamespacedPod({ name: victim.name, namespace: NS });
        await waitFor(`pod ${victim.name} is gone`, async () => !(await servicePods()).some((p) => p.uid === victim.uid), 60_000);
        goneAt = Date.now();
      })(),
    ]);
    const afterGone = r.finished.filter((f) => f.at > goneAt);
    console.log(
      `burst, pod deleted: ${describeBurst(r)}; ${victim.name} gone after ${((goneAt - started) / 1000).toFixed(1)} s, ${afterGone.length} answered after that`,
    );
    assert.deepEqual(r.lost, [], 'no request failed twice');
    assert.equal(r.wrongUser, 0);
    assert.ok(afterGone.length >= 10 && afterGone.every((f) => f.ok), 'requests after the pod was gone were answered, by the other replica');
    assert.equal(r.created.length, 20);
    await assertListed(token, r.created);
    // The Deployment replaces the deleted pod: two ready replicas again.
    await waitFor('two ready replicas again', twoReadyReplicas, 90_000);
    assert.ok(!(await servicePods()).some((p) => p.uid === victim.uid));
  });

  test('a rolling update (maxUnavailable 0) during a burst: nothing lost, both pods replaced', { timeout: 300_000 }, async () => {
    const token = tokens[user];
    assert.ok(token, 'needs the user');
    await waitFor('two ready replicas', twoReadyReplicas, 90_000);
    const before = new Set((await servicePods()).map((p) => p.uid));
    // What `kubectl rollout restart` does: a new pod template, rolled out as an upgrade would be.
    const restart = (async () => {
      await new Promise((res) => setTimeout(res, 1_000));
      const at = new Date().toISOString();
      await apps.patchNamespacedDeployment(
        { name: 'devtool-service', namespace: NS, body: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': at } } } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    })();
    // Longer than the rollout (two pods started one by one, each old one stopping gracefully).
    const [r] = await Promise.all([
      burst({ base: URL_, ca, token, user, gets: 300, tokens: 5, tokenPrefix: `roll-${run}`, clients: 8, pauseMs: 700 }),
      restart,
    ]);
    console.log(`burst, rolling update: ${describeBurst(r)}`);
    assert.deepEqual(r.lost, [], 'no request failed twice');
    assert.equal(r.wrongUser, 0);
    assert.equal(r.created.length, 5);
    await assertListed(token, r.created);
    await waitFor(
      'the rollout is done: two new ready replicas',
      async () => (await twoReadyReplicas()) && (await servicePods()).every((p) => !before.has(p.uid)),
      120_000,
    );
  });

  test('service:up again (helm upgrade with the same values) restarts nothing', { timeout: 600_000 }, async () => {
    await waitFor('two ready replicas', twoReadyReplicas, 90_000);
    const podsOf = async () => (await core.listNamespacedPod({ namespace: NS })).items.map((p) => p.metadata!.uid!).sort();
    const generation = async () => (await apps.readNamespacedDeployment({ name: 'devtool-service', namespace: NS })).metadata?.generation;
    const before = { pods: await podsOf(), generation: await generation() };
    assert.equal(serviceUp(), URL_);
    assert.deepEqual({ pods: await podsOf(), generation: await generation() }, before);
  });
});
