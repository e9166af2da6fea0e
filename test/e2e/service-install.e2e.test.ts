/**
 * The devtool service installed by its chart on the local cluster, reached as users reach it:
 * `npm run service:up` (two ready replicas behind the front door, the CA handed out by
 * /api/v1/info), `npm run service:user` (an admin and a user; a taken name refused in one line),
 * `devtool context use https://devtool.devtool.test --token` through the real ingress, a request
 * burst from parallel clients while a service pod is deleted (nothing lost, the other replica takes
 * over), and an upgrade with the same values that restarts nothing. The chart's rendering (RBAC,
 * environment, the CA's certificate without its key) is checked with `helm template`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, repoRoot, runDevtool } from './cli.ts';
import { E2E_NAMESPACE_LABEL, pathWithHelm } from './cluster.ts';
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
});

after(async () => {
  if (!core) return;
  for (const name of [admin, user]) {
    await core.deleteNamespace({ name: `${name}-devtool` }).catch(() => {});
    // Its token Secrets are owned by the ServiceAccount: the garbage collector removes them.
    await core.deleteNamespacedServiceAccount({ name: `user-${name}`, namespace: NS }).catch(() => {});
  }
});

interface Answer {
  status?: number;
  body?: string;
  error?: string;
}

/** One HTTPS request through the front door, trusting the project's CA only. */
function call(agent: Agent, method: string, path: string, token?: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers['authorization'] = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = request(`${URL_}${path}`, { method, agent, headers, timeout: 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `${e.code ?? ''} ${e.message}` }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `${e.code ?? ''} ${e.message}` }));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

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
      // Labelled as the tests' own: an interrupted run's namespaces are deleted by the next (scripts/test.sh).
      await core.patchNamespace(
        { name: `${name}-devtool`, body: { metadata: { labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
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

  test('a burst of requests from parallel clients while a service pod is deleted: nothing lost, the other replica takes over', {
    timeout: 180_000,
  }, async () => {
    const token = tokens[user];
    assert.ok(token, 'needs the user');
    assert.ok(await twoReadyReplicas(), 'starts with two ready replicas');
    const victim = (await servicePods())[0]!;
    const clients = Array.from({ length: 10 }, () => new Agent({ ca, keepAlive: true, maxSockets: 2 }));
    // 200 GET /me and 20 token creations (the token routes allow 30 a minute per client and replica),
    // spread over ~15 s so that the deletion, the pod's shutdown and its replacement happen mid-burst.
    type Job = { kind: 'me' } | { kind: 'token'; name: string };
    const jobs: Job[] = [];
    for (let i = 0; i < 220; i++) jobs.push(i % 11 === 5 ? { kind: 'token', name: `burst-${run}-${i}` } : { kind: 'me' });
    assert.equal(jobs.filter((j) => j.kind === 'me').length, 200);
    const failedOnce: string[] = [];
    const lost: string[] = [];
    const created: string[] = [];
    const finishedAt: { at: number; ok: boolean }[] = [];
    const attempt = async (agent: Agent, job: Job): Promise<string | undefined> => {
      const a = job.kind === 'me' ? await call(agent, 'GET', '/api/v1/me', token) : await call(agent, 'POST', '/api/v1/tokens', token, { name: job.name });
      if (job.kind === 'me' && a.status === 200) {
        assert.equal((JSON.parse(a.body!) as { name: string }).name, user);
        return undefined;
      }
      if (job.kind === 'token' && a.status === 201) {
        created.push((JSON.parse(a.body!) as { id: string }).id);
        return undefined;
      }
      return `${job.kind}: ${a.status ?? ''} ${a.error ?? a.body ?? ''}`.trim();
    };
    let next = 0;
    const started = Date.now();
    const worker = async (agent: Agent) => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        let why = await attempt(agent, job);
        if (why !== undefined) {
          failedOnce.push(why);
          // The one retry a client makes (a new connection: the failed one may be the dying pod's).
          why = await attempt(new Agent({ ca }), job);
          if (why !== undefined) lost.push(why);
        }
        finishedAt.push({ at: Date.now(), ok: why === undefined });
        await new Promise((r) => setTimeout(r, 600));
      }
    };
    let goneAt = 0;
    const killer = (async () => {
      await new Promise((r) => setTimeout(r, 2_000));
      await core.deleteNamespacedPod({ name: victim.name, namespace: NS });
      await waitFor(`pod ${victim.name} is gone`, async () => !(await servicePods()).some((p) => p.uid === victim.uid), 60_000);
      goneAt = Date.now();
    })();
    await Promise.all([...clients.map(worker), killer]);
    for (const c of clients) c.destroy();
    const afterGone = finishedAt.filter((f) => f.at > goneAt);
    console.log(
      `burst: ${jobs.length} requests in ${((Date.now() - started) / 1000).toFixed(1)} s, ${failedOnce.length} failed once and succeeded on retry, ` +
        `${lost.length} lost; pod ${victim.name} gone after ${((goneAt - started) / 1000).toFixed(1)} s, ${afterGone.length} answered after that` +
        (failedOnce.length ? `; first failures: ${failedOnce.slice(0, 5).join(' | ')}` : '') +
        (lost.length ? `; lost: ${lost.slice(0, 5).join(' | ')}` : ''),
    );
    assert.deepEqual(lost, [], 'no request failed twice');
    assert.ok(afterGone.length >= 10 && afterGone.every((f) => f.ok), 'requests after the pod was gone were answered, by the other replica');
    assert.equal(created.length, 20);
    const listed = await call(new Agent({ ca }), 'GET', '/api/v1/tokens', token);
    assert.equal(listed.status, 200, listed.body);
    const ids = new Set((JSON.parse(listed.body!) as { tokens: { id: string }[] }).tokens.map((t) => t.id));
    assert.deepEqual(
      created.filter((id) => !ids.has(id)),
      [],
      'every token created during the burst is listed',
    );
    // The Deployment replaces the deleted pod: two ready replicas again.
    await waitFor('two ready replicas again', twoReadyReplicas, 90_000);
    assert.ok(!(await servicePods()).some((p) => p.uid === victim.uid));
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

/** What the rendering test reads of the chart's objects. */
interface Rendered {
  kind: string;
  metadata: { name: string };
  rules?: unknown[];
  spec?: {
    replicas?: number;
    strategy?: { rollingUpdate?: unknown };
    template?: {
      spec: {
        containers: { env: { name: string; value?: string }[]; readinessProbe: { httpGet: { path: string } }; livenessProbe: { httpGet: { path: string } } }[];
        volumes: { name: string; secret?: { items?: unknown[] } }[];
      };
    };
    minAvailable?: number;
    ingressClassName?: string;
    rules?: { host: string }[];
  };
}

describe('the chart renders', () => {
  const helm = (args: string[]) => spawnSync('helm', args, { encoding: 'utf8', env: { ...process.env, PATH: pathWithHelm(), KUBECONFIG: kubeconfigPath } });
  const render = (...sets: string[]) => {
    const r = helm(['template', 'x', join(repoRoot, 'chart'), '--namespace', 'ns', ...sets.flatMap((s) => ['--set', s])]);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };

  test('helm lint passes; the service gets its environment, the CA certificate without the key, and exactly its rights', async () => {
    const lint = helm(['lint', join(repoRoot, 'chart')]);
    assert.equal(lint.status, 0, lint.stdout + lint.stderr);
    const { parseAllDocuments } = await import('yaml');
    const docs = parseAllDocuments(
      render(
        'ingress.controller.image=c',
        'service.image=s',
        'service.signup.mode=allowList',
        'service.signup.allowList={ann,bob}',
        'service.kubeApiServer=https://k:6443',
      ),
    )
      .map((d) => d.toJS() as Rendered)
      .filter(Boolean);
    const deploy = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'x-service')!;
    const spec = deploy.spec!;
    assert.equal(spec.replicas, 2);
    assert.deepEqual(spec.strategy?.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
    const container = spec.template!.spec.containers[0]!;
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value ?? 'fieldRef']));
    assert.deepEqual(env, {
      POD_NAMESPACE: 'fieldRef',
      PORT: '8080',
      LOG_LEVEL: 'info',
      DEVTOOL_PUBLIC_URL: 'https://devtool.devtool.test',
      DEVTOOL_ENDPOINT_DOMAIN: 'devtool.test',
      DEVTOOL_KUBE_SERVER: 'https://k:6443',
      DEVTOOL_CA_FILE: '/etc/devtool/ca/ca.crt',
      DEVTOOL_TRUSTED_PROXIES: '1',
      DEVTOOL_RATE_LIMIT: '30',
      DEVTOOL_SIGNUP_MODE: 'allowList',
      DEVTOOL_SIGNUP_ALLOW: 'ann,bob',
    });
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    const caVolume = spec.template!.spec.volumes.find((v) => v.name === 'ca');
    assert.deepEqual(caVolume?.secret?.items, [{ key: 'tls.crt', path: 'ca.crt' }], 'the certificate only, never the key');
    const pdb = docs.find((d) => d.kind === 'PodDisruptionBudget')!;
    assert.equal(pdb.spec?.minAvailable, 1);
    const ingress = docs.find((d) => d.kind === 'Ingress')!;
    assert.equal(ingress.spec?.ingressClassName, 'devtool');
    assert.equal(ingress.spec?.rules?.[0]?.host, 'devtool.devtool.test');
    const rules = (kind: string) => docs.find((d) => d.kind === kind && d.metadata.name === 'x-service')!.rules;
    assert.deepEqual(rules('ClusterRole'), [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'create', 'delete'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['admin'] },
    ]);
    assert.deepEqual(rules('Role'), [
      { apiGroups: [''], resources: ['serviceaccounts', 'secrets'], verbs: ['get', 'list', 'create', 'delete', 'patch', 'deletecollection'] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
    ]);
  });

  test('a wrong signup mode is refused naming the value; without the front door, no CA is mounted', () => {
    const bad = helm([
      'template',
      'x',
      join(repoRoot, 'chart'),
      '--set',
      'ingress.controller.image=c',
      '--set',
      'service.image=s',
      '--set',
      'service.signup.mode=closed',
    ]);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /service\.signup\.mode: "closed" is not open or allowList/);
    const off = render('ingress.enabled=false', 'ingress.className=nginx', 'service.image=s');
    assert.doesNotMatch(off, /DEVTOOL_CA_FILE|front-door-ca/);
    assert.match(off, /ingressClassName: nginx/);
    const none = render('ingress.enabled=false', 'service.enabled=false');
    assert.doesNotMatch(none, /^kind:/m);
  });
});
