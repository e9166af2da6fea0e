/**
 * Namespace sleep and wake on the service its chart installed: a user's namespace holding a Compose
 * application of two services (deployed with `devtool deploy`, her own credentials) and two
 * CronJobs, one of them suspended by her. `namespace sleep` takes every pod away and suspends both
 * CronJobs; `namespace list` says Sleeping; `up` is refused in one line; `namespace wake` gives the
 * workloads exactly the replicas they had and each CronJob its own suspend, and the waking mark
 * goes once they are available; an `up` running when the namespace is put to sleep stops in one
 * line; `deploy` into a sleeping namespace wakes it first. Another user
 * can neither put her namespace to sleep nor wake it (403), and a plain user's token cannot set the
 * marks on any Namespace, not even her own. The idle sweep runs in the test process over this
 * namespace alone (the service's store, the owner's token, a clock two hours on): the installed
 * service runs without `sleep.afterIdle`, which would put every other test's namespaces to sleep.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { LAST_ACTIVITY, SLEEPING_SINCE, SLEPT_BY, WAKING_SINCE } from '../../api/namespace-sleep.ts';
import { kubeOwnerCluster } from '../../server/namespaces/kube-owner.ts';
import type { NamespaceDeps } from '../../server/namespaces/sleep.ts';
import { sweepIdleNamespaces } from '../../server/namespaces/sweeper.ts';
import { KubeStore } from '../../server/store/kubernetes.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { REGISTRY } from './cluster.ts';
import { type InstalledService, installedService, kubectlAs, SERVICE_NAMESPACE, serviceCall } from './installed-service.ts';
import { killUpSessions, startUp } from './up-session.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const users = { ann: `sleepa${run}`, bob: `sleepb${run}` };
const ns = `sleep${run}`;
/** Replicas each service asks for: what the wake must give back. */
const REPLICAS = { web: 2, worker: 1 };

let svc: InstalledService;
let apps: k8s.AppsV1Api;
let batch: k8s.BatchV1Api;
const sb: Record<keyof typeof users, Sandbox> = {} as Record<keyof typeof users, Sandbox>;
const tokens: Record<keyof typeof users, string> = { ann: '', bob: '' };
let app: string;
let project: string;
/** Figures for the decision record: how long each step took, ms. */
const figures: Record<string, number> = {};

const as = (who: keyof typeof users, args: string[], cwd?: string, timeoutMs = 60_000) =>
  runDevtool(args, { env: sb[who].env, ...(cwd ? { cwd } : {}), timeoutMs });

const service = (name: string, replicas: number) => [
  `  ${name}:`,
  `    image: ${REGISTRY}/debian:bookworm`,
  '    command: ["sleep", "infinity"]',
  // sleep(1) as PID 1 ignores SIGTERM: without this each pod would take Kubernetes' 30 s grace period to go.
  '    stop_grace_period: 1s',
  `    deploy: {replicas: ${replicas}}`,
];

const cronJob = (name: string, suspend: boolean) =>
  [
    'apiVersion: batch/v1',
    'kind: CronJob',
    `metadata: {name: ${name}}`,
    'spec:',
    '  schedule: "0 0 1 1 *"',
    `  suspend: ${suspend}`,
    '  jobTemplate:',
    '    spec:',
    '      template:',
    '        spec:',
    '          restartPolicy: Never',
    `          containers: [{name: job, image: "${REGISTRY}/debian:bookworm", command: ["true"]}]`,
    '',
  ].join('\n');

async function marks(): Promise<Record<string, string>> {
  return (await svc.core.readNamespace({ name: ns })).metadata?.annotations ?? {};
}
async function replicas(): Promise<Record<string, number | undefined>> {
  const list = await apps.listNamespacedDeployment({ namespace: ns });
  return Object.fromEntries(list.items.map((d) => [d.metadata!.name!, d.spec?.replicas]));
}
async function suspends(): Promise<Record<string, boolean | undefined>> {
  const list = await batch.listNamespacedCronJob({ namespace: ns });
  return Object.fromEntries(list.items.map((c) => [c.metadata!.name!, c.spec?.suspend]));
}
/** Pods of the namespace not finished: those being deleted count until they are gone. */
async function pods(): Promise<number> {
  const list = await svc.core.listNamespacedPod({ namespace: ns });
  return list.items.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
}

before(async () => {
  svc = await installedService();
  apps = svc.kc.makeApiClient(k8s.AppsV1Api);
  batch = svc.kc.makeApiClient(k8s.BatchV1Api);
  for (const who of Object.keys(users) as (keyof typeof users)[]) {
    tokens[who] = await svc.createUser(users[who]);
    sb[who] = createSandbox();
    const use = runDevtool(['context', 'use', svc.url, '--token', tokens[who]], { env: { ...sb[who].env, DEVTOOL_CA_CERT: svc.caFile }, timeoutMs: 30_000 });
    assert.equal(use.code, 0, use.stderr);
    assert.equal(as(who, ['kubeconfig']).code, 0);
  }
  const created = as('ann', ['namespace', 'create', ns]);
  assert.equal(created.code, 0, created.stderr);
  await svc.markForCleanup(ns);

  app = join(sb.ann.root, 'shop');
  mkdirSync(app);
  writeFileSync(join(app, 'compose.yaml'), ['services:', ...service('web', REPLICAS.web), ...service('worker', REPLICAS.worker), ''].join('\n'));
  const deploy = as('ann', ['deploy', '--wait', '--timeout', '3m'], app, 240_000);
  assert.equal(deploy.code, 0, `deploy failed:\n${deploy.stderr}`);
  for (const [name, suspend] of [
    ['tick', false],
    ['held', true],
  ] as const) {
    const r = kubectlAs(sb.ann, ['apply', '-n', ns, '-f', '-'], cronJob(name, suspend));
    assert.equal(r.code, 0, r.stderr);
  }
  project = join(sb.ann.root, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'devtool.yml'), 'services:\n  web:\n    sync: [".:/app"]\n');
});

after(async () => {
  killUpSessions();
  if (svc) await svc.removeUsers();
  if (Object.keys(figures).length) process.stdout.write(`namespace sleep figures (ms): ${JSON.stringify(figures)}\n`);
});

describe('namespace sleep and wake on the installed service', () => {
  test('sleep: every pod goes, both CronJobs are suspended, the list says Sleeping, `up` is refused in one line', { timeout: 240_000 }, async () => {
    assert.deepEqual(await replicas(), REPLICAS);
    let started = Date.now();
    const r = as('ann', ['namespace', 'sleep', ns]);
    figures['sleep command'] = Date.now() - started;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Namespace "${ns}" is asleep since \\S+: 'devtool namespace wake ${ns}' wakes it\\n$`));
    assert.deepEqual(await replicas(), { web: 0, worker: 0 });
    assert.deepEqual(await suspends(), { tick: true, held: true });
    const m = await marks();
    assert.ok(m[SLEEPING_SINCE], JSON.stringify(m));
    assert.equal(m[SLEPT_BY], users.ann);
    await waitFor('every pod of the sleeping namespace gone', async () => (await pods()) === 0, 120_000);
    figures['sleep until every pod is gone'] = Date.now() - started;

    started = Date.now();
    const again = as('ann', ['namespace', 'sleep', ns]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await marks())[SLEEPING_SINCE], m[SLEEPING_SINCE], 'sleeping twice keeps the first mark');

    const list = as('ann', ['namespace', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${ns} \\* +Sleeping +since ${m[SLEEPING_SINCE]!.replace(/[.]/g, '\\.')} by ${users.ann}$`, 'm'));

    const up = as('ann', ['up', 'web', '-n', ns], project);
    assert.equal(up.code, 1, up.stderr);
    assert.equal(
      up.stderr,
      `Error: namespace ${ns} is asleep (since ${m[SLEEPING_SINCE]}, put to sleep by ${users.ann}): wake it with 'devtool namespace wake ${ns}'\n`,
    );
    assert.deepEqual(Object.keys(await replicas()).sort(), ['web', 'worker'], '`up` made no dev Deployment');
  });

  test('another user can neither put the namespace to sleep nor wake it; no user token can set the marks', async () => {
    for (const action of ['sleep', 'wake']) {
      const r = await serviceCall(svc.url, svc.caPem, tokens.bob, 'POST', `/api/v1/namespaces/${ns}/${action}`);
      assert.equal(r.status, 403, r.body);
      assert.match(JSON.parse(r.body).error, new RegExp(`^namespace ${ns}: only its owner \\(${users.ann}\\) or an admin can`));
    }
    assert.deepEqual(await replicas(), { web: 0, worker: 0 }, "bob's wake changed nothing");
    for (const [who, target] of [
      ['bob', ns],
      ['bob', `${users.bob}-devtool`],
      ['ann', ns],
    ] as const) {
      const r = kubectlAs(sb[who], ['annotate', 'namespace', target, `${WAKING_SINCE}=2020-01-01T00:00:00Z`]);
      assert.notEqual(r.code, 0, `${who} annotated ${target}: ${r.stdout}`);
      assert.match(r.stderr, /forbidden/i);
    }
    assert.equal((await marks())[WAKING_SINCE], undefined);
  });

  test('wake: exactly the replicas they had, each CronJob its own suspend, the waking mark gone once available', { timeout: 420_000 }, async () => {
    const started = Date.now();
    const r = as('ann', ['namespace', 'wake', ns]);
    figures['wake command'] = Date.now() - started;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Namespace "${ns}" is waking: its workloads are starting\n`);
    assert.deepEqual(await replicas(), REPLICAS);
    assert.deepEqual(await suspends(), { tick: false, held: true });
    const m = await marks();
    assert.equal(m[SLEEPING_SINCE], undefined);
    assert.ok(m[WAKING_SINCE], JSON.stringify(m));
    assert.match(as('ann', ['namespace', 'list']).stdout, new RegExp(`^${ns} \\* +Waking +waking since `, 'm'));
    await waitFor('the waking mark removed', async () => (await marks())[WAKING_SINCE] === undefined, 330_000);
    figures['wake until the mark is gone'] = Date.now() - started;
    assert.equal(await pods(), REPLICAS.web + REPLICAS.worker);
    const annotations = (await apps.listNamespacedDeployment({ namespace: ns })).items.map(
      (d) => d.metadata?.annotations?.['devtool.dev/replicas-before-sleep'],
    );
    assert.deepEqual(annotations, [undefined, undefined], 'nothing kept once awake');
    assert.match(as('ann', ['namespace', 'list']).stdout, new RegExp(`^${ns} \\* +Active`, 'm'));
  });

  test('an `up` running when its namespace is put to sleep stops with one line', { timeout: 420_000 }, async () => {
    const folder = join(sb.ann.root, 'dev');
    mkdirSync(folder);
    writeFileSync(join(folder, 'devtool.yml'), 'services:\n  web:\n    environment: {FROM_MANIFEST: "1"}\n');
    const up = await startUp(['-n', ns], { env: sb.ann.env, cwd: folder });
    const exited = new Promise<number | null>((resolve) => up.proc.once('exit', (code) => resolve(code)));
    const started = Date.now();
    assert.equal(as('ann', ['namespace', 'sleep', ns]).code, 0);
    const code = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 120_000))]);
    figures['sleep until a running up stopped'] = Date.now() - started;
    assert.equal(code, 1, up.output());
    const errors = up
      .output()
      .split('\n')
      .filter((l) => l.startsWith('Error: '));
    assert.deepEqual(errors, [
      `Error: namespace ${ns} was put to sleep: 'up web' stops; wake it with 'devtool namespace wake ${ns}', then run 'devtool up' again`,
    ]);
    assert.ok((up.output().match(/reconnecting/g) ?? []).length <= 1, up.output());
    // Woken, the dev container runs again; `down` restores the original.
    assert.equal(as('ann', ['namespace', 'wake', ns]).code, 0);
    const down = as('ann', ['down', '-n', ns], folder, 120_000);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(await replicas(), REPLICAS);
    await waitFor('the waking mark removed', async () => (await marks())[WAKING_SINCE] === undefined, 330_000);
  });

  test('deploy into a sleeping namespace wakes it first, in one line', { timeout: 300_000 }, async () => {
    assert.equal(as('ann', ['namespace', 'sleep', ns]).code, 0);
    const d = as('ann', ['deploy', '--wait', '--timeout', '3m'], app, 240_000);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stderr, new RegExp(`^namespace ${ns} was asleep \\(since \\S+\\): woken for this deploy$`, 'm'));
    assert.deepEqual(await replicas(), REPLICAS);
    assert.equal((await marks())[SLEEPING_SINCE], undefined);
  });

  test('the idle sweep on the cluster: activity read as the owner, the idle namespace put to sleep by idle', { timeout: 120_000 }, async () => {
    // The sweep of the service runs only with sleep.afterIdle, which the shared install leaves off
    // (it would put every other test's namespaces to sleep): here the same sweep runs in the test,
    // over this namespace only, with the service's store and the owner's own token, its clock 2 h on.
    const store = await KubeStore.create({ namespace: SERVICE_NAMESPACE }, svc.kc);
    const creds = await serviceCall(svc.url, svc.caPem, tokens.ann, 'POST', '/api/v1/kube-credentials');
    assert.equal(creds.status, 200, creds.body);
    const { server, certificateAuthority, token } = JSON.parse(creds.body) as { server: string; certificateAuthority: string; token: string };
    const userKc = new k8s.KubeConfig();
    userKc.loadFromOptions({
      clusters: [{ name: 'c', server, caData: Buffer.from(certificateAuthority).toString('base64') }],
      users: [{ name: 'u', token }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const owner = await kubeOwnerCluster(userKc);
    const clock = new Date(Date.now() + 2 * 3_600_000);
    const deps: NamespaceDeps = {
      store: {
        getNamespace: (n) => store.getNamespace(n),
        listNamespaces: async () => (await store.listNamespaces()).filter((n) => n.name === ns),
        setNamespaceMarks: (n, u) => store.setNamespaceMarks(n, u),
        deleteNamespace: async (n) => assert.fail(`the sweep deleted ${n}`),
        runs: store.runs,
      },
      actAs: async (who) => {
        assert.equal(who, users.ann);
        return owner;
      },
      now: () => clock,
    };
    const records = await svc.core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'devtool.dev/environment-state' });
    const deployed = records.items
      .map((c) => c.data?.['updated'] ?? '')
      .sort()
      .at(-1)!;
    assert.ok(deployed, 'the deploy wrote its environment record');
    assert.deepEqual(await owner.activityTimes(ns, new Date()), [deployed], "the environment record, read with the owner's token");
    assert.deepEqual(await owner.unavailableWorkloads(ns), []);

    const report = await sweepIdleNamespaces(deps, { sleepAfterMs: 3_600_000 });
    assert.deepEqual(report.failed, []);
    assert.deepEqual(
      report.slept.map((x) => x.name),
      [ns],
    );
    const m = await marks();
    assert.equal(m[SLEPT_BY], 'idle');
    assert.equal(m[LAST_ACTIVITY], new Date(deployed).toISOString());
    assert.deepEqual(await replicas(), { web: 0, worker: 0 });
    assert.match(as('ann', ['namespace', 'list']).stdout, new RegExp(`^${ns} \\* +Sleeping +since \\S+ by idle$`, 'm'));
    assert.deepEqual((await sweepIdleNamespaces(deps, { sleepAfterMs: 3_600_000 })).slept, [], 'asleep: nothing more to do');
  });
});
