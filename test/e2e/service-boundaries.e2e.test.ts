/**
 * The boundaries between users on the service its chart installed, tried as an attacker would: a
 * plain user, Mallory, with her own credentials (`devtool kubeconfig`, then kubectl) and the
 * service's API, against an admin's global preview and against the node. Each test is an attack
 * that must be refused:
 * - the node: a privileged pod with the host's PID namespace and `/` mounted, in her own namespace
 *   (Pod Security baseline on every namespace the service makes), and undoing that policy;
 * - a global preview: reading the owner's run credentials and stored secrets (Secrets, exec, a pod
 *   that mounts them), starting a pipeline there from her own repository, writing a record that
 *   tells the service to destroy it;
 * - revocation: cluster credentials made from an API token stop working once it is revoked, and a
 *   pipeline run's own token can neither mint tokens nor outlive its run.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createSandbox, repoRoot, runDevtool, type Sandbox, spawnDevtool } from './cli.ts';
import { REGISTRY } from './cluster.ts';
import { CA_FILE, type InstalledService, installedService, kubectlAs, serviceCall } from './installed-service.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const names = { admin: `e2ebr${run}`, mallory: `e2ebm${run}` };
const preview = `shared-${run}`;

let svc: InstalledService;
let work: string;
const sandboxes = {} as Record<keyof typeof names, Sandbox>;
const tokens = {} as Record<keyof typeof names, string>;
/** The admin's preview repository: its deploy takes a while, so its run's Secrets are there to be tried. */
let slowRepo: string;
/** Mallory's repository: its commands would run with whoever's credentials run them. */
let evilRepo: string;
const MARK = `mallory-was-here-${run}`;

const as = (who: keyof typeof names, args: string[], timeoutMs = 300_000) =>
  runDevtool(args, { env: { ...sandboxes[who].env, NODE_EXTRA_CA_CERTS: CA_FILE }, cwd: work, timeoutMs });
const kubectl = (who: keyof typeof names, args: string[], input?: string) => kubectlAs(sandboxes[who], args, input);
const api = (who: keyof typeof names | string, method: string, path: string, body?: unknown) =>
  serviceCall(svc.url, svc.caPem, who in tokens ? tokens[who as keyof typeof names] : who, method, path, body);

function script(path: string, args: string[]): string {
  const r = spawnSync('bash', [join(repoRoot, path), ...args], { encoding: 'utf8', timeout: 900_000 });
  assert.equal(r.status, 0, `${path} ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout.trim().split('\n').at(-1)!;
}

function repository(name: string, manifest: string[]): string {
  const dir = join(work, 'sources', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'devtool.yml'), `${manifest.join('\n')}\n`);
  return script('scripts/git-server.sh', ['repo', `${name}-${run}`, dir]);
}

/** Kubernetes refused it: a 403 from RBAC, or Pod Security's refusal. */
const forbidden = (r: { code: number | null; stderr: string }) => r.code !== 0 && /forbidden|violates PodSecurity/i.test(r.stderr);

before(async () => {
  svc = await installedService();
  assert.equal(script('scripts/git-server.sh', ['up']), 'https://git-server.devtool.test');
  for (const who of Object.keys(names) as (keyof typeof names)[]) {
    tokens[who] = await svc.createUser(names[who], who === 'admin');
    sandboxes[who] = createSandbox();
    if (!work) {
      work = join(sandboxes[who].root, 'work');
      mkdirSync(work, { recursive: true });
    }
    const use = as(who, ['context', 'use', svc.url, '--token', tokens[who]], 30_000);
    assert.equal(use.code, 0, use.stderr);
    const kc = as(who, ['kubeconfig'], 30_000);
    assert.equal(kc.code, 0, kc.stderr);
  }
  slowRepo = repository('slow', [
    'deploy:',
    '  - sleep 40; kubectl create configmap deployed --from-literal=ok=yes',
    'destroy:',
    '  - echo "destroyed by its owner"',
  ]);
  evilRepo = repository('evil', ['deploy:', `  - echo ${MARK}`, 'destroy:', `  - echo ${MARK}`]);
});

after(async () => {
  if (svc) await svc.removeUsers();
});

describe('trust boundaries between users, on the installed service', () => {
  test('the node: a privileged pod with the host PID namespace and / mounted is refused in her own namespace, and she cannot lift the policy', async () => {
    const ns = `${names.mallory}-devtool`;
    const attack = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'root-on-the-node', namespace: ns },
      spec: {
        hostPID: true,
        containers: [
          {
            name: 'x',
            image: `${REGISTRY}/debian:bookworm`,
            command: ['cat', '/host/var/lib/devtool-cluster/pki/ca.key'],
            securityContext: { privileged: true },
            volumeMounts: [{ name: 'host', mountPath: '/host' }],
          },
        ],
        volumes: [{ name: 'host', hostPath: { path: '/' } }],
      },
    };
    // A server-side dry run goes through admission (Pod Security) without running anything.
    const refused = kubectl('mallory', ['create', '--dry-run=server', '-f', '-'], JSON.stringify(attack));
    assert.ok(forbidden(refused), `the privileged pod was admitted: ${refused.stdout}${refused.stderr}`);
    assert.match(refused.stderr, /violates PodSecurity "baseline:latest"/);
    // An ordinary image that runs as root still runs (baseline, not restricted).
    const plain = kubectl('mallory', ['run', 'plain', `--image=${REGISTRY}/nginx:1`, '--restart=Never', '--dry-run=server']);
    assert.equal(plain.code, 0, plain.stderr);
    // The policy is the service's: the owner can neither relabel the namespace nor drop the quota.
    assert.ok(forbidden(kubectl('mallory', ['label', 'namespace', ns, '--overwrite', 'pod-security.kubernetes.io/enforce=privileged'])));
    assert.ok(forbidden(kubectl('mallory', ['delete', 'resourcequota', 'devtool-limits', '-n', ns])));
    const labels = (await svc.core.readNamespace({ name: ns })).metadata?.labels ?? {};
    assert.equal(labels['pod-security.kubernetes.io/enforce'], 'baseline');
  });

  /** The admin's deploy of the global preview, started by the first of the three tests below. */
  let deployed: Promise<number | null>;
  let deployOutput = '';
  const PASSWORD = `admin-secret-${run}`;
  const forged = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'devtool-pipeline-slow', namespace: preview },
    // The record the service once trusted: a destroy that has ended, which got the namespace deleted.
    data: {
      'run.json': JSON.stringify({
        name: 'slow',
        namespace: preview,
        status: 'destroyed',
        action: 'destroy',
        repository: evilRepo,
        job: 'x',
        runId: 'x',
        startedAt: new Date().toISOString(),
      }),
    },
  };

  test("a global preview: she cannot read the owner's run credentials or stored secrets, by any road", async () => {
    assert.equal((await api('admin', 'PUT', '/api/v1/secrets/DB_PASSWORD', { value: PASSWORD })).status, 204);
    const deploy = spawnDevtool(['preview', 'deploy', preview, '--scope', 'global', '--repository', slowRepo, '--wait', '--timeout', '5m'], {
      env: { ...sandboxes.admin.env, NODE_EXTRA_CA_CERTS: CA_FILE },
      cwd: work,
    });
    deploy.stdout.on('data', (d: Buffer) => (deployOutput += d));
    deploy.stderr.on('data', (d: Buffer) => (deployOutput += d));
    deployed = new Promise<number | null>((resolve) => deploy.on('close', resolve));
    await waitFor('the preview namespace', async () => !!(await svc.core.readNamespace({ name: preview }).catch(() => undefined)), 60_000);
    await svc.markForCleanup(preview);
    // While the run goes on, its Secrets (the admin's tokens, the stored secrets) are in the namespace.
    const secretsThere = async () => (await svc.core.listNamespacedSecret({ namespace: preview })).items.map((s) => s.metadata!.name!);
    await waitFor('the run and its Secrets', async () => (await secretsThere()).some((n) => n.startsWith('devtool-run-')), 60_000);
    const runPod = async () => (await svc.core.listNamespacedPod({ namespace: preview, labelSelector: 'devtool.dev/pipeline' })).items[0]?.metadata?.name;
    await waitFor('the runner pod', async () => !!(await runPod()), 60_000);
    const [credentials] = (await secretsThere()).filter((n) => n.startsWith('devtool-run-'));

    // She sees the preview (view), but none of its Secrets.
    assert.equal(kubectl('mallory', ['get', 'pods', '-n', preview]).code, 0, 'she may look at it');
    assert.ok(forbidden(kubectl('mallory', ['get', 'secrets', '-n', preview])), 'listing its Secrets');
    assert.ok(forbidden(kubectl('mallory', ['get', 'secret', credentials!, '-n', preview, '-o', 'yaml'])), 'reading the run Secret');
    assert.ok(forbidden(kubectl('mallory', ['exec', '-n', preview, (await runPod())!, '--', 'cat', '/var/run/devtool/api-token'])), 'exec');
    const thief = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'thief', namespace: preview },
      spec: {
        containers: [{ name: 'x', image: `${REGISTRY}/debian:bookworm`, command: ['cat', '/s/api-token'], volumeMounts: [{ name: 's', mountPath: '/s' }] }],
        volumes: [{ name: 's', secret: { secretName: credentials! } }],
      },
    };
    assert.ok(forbidden(kubectl('mallory', ['create', '-f', '-'], JSON.stringify(thief))), 'a pod mounting the run Secret');
  });

  test('a global preview: she cannot start a run of her own repository there, through the service or by hand', () => {
    const hijack = as('mallory', ['pipeline', 'deploy', '--namespace', preview, '--name', 'slow', '--repository', evilRepo]);
    assert.equal(hijack.code, 1, hijack.stdout);
    assert.match(hijack.stderr, new RegExp(`namespace ${preview} is a preview environment`));
    assert.ok(forbidden(kubectl('mallory', ['create', 'job', 'mine', '-n', preview, `--image=${REGISTRY}/debian:bookworm`, '--', 'true'])), 'a Job by hand');
  });

  test("a global preview: a forged record neither gets it deleted nor changes what the owner's destroy runs", async () => {
    assert.ok(forbidden(kubectl('mallory', ['apply', '-f', '-'], JSON.stringify(forged))), 'writing a record there');
    assert.equal(await deployed, 0, deployOutput);
    // Written anyway (its owner can): the service decides from its own records, so nothing happens.
    assert.equal(kubectl('admin', ['apply', '-f', '-'], JSON.stringify(forged)).code, 0);
    const list = as('mallory', ['preview', 'list']);
    assert.match(list.stdout, new RegExp(`^${preview}\\s+global\\s+deployed\\s`, 'm'), list.stdout);
    assert.equal((await svc.core.readNamespace({ name: preview })).status?.phase, 'Active');

    // The admin's destroy runs the admin's own repository, as the admin: nothing of hers.
    const destroyed = as('admin', ['preview', 'destroy', preview, '--wait']);
    assert.equal(destroyed.code, 0, `${destroyed.stdout}\n${destroyed.stderr}`);
    assert.match(destroyed.stdout, /destroyed by its owner/);
    assert.doesNotMatch(destroyed.stdout + destroyed.stderr, new RegExp(MARK));
    assert.ok(!deployOutput.includes(PASSWORD), 'no stored secret in the output');
  });

  test('revoking an API token ends the cluster credentials made from it', async () => {
    const made = await api('mallory', 'POST', '/api/v1/tokens', { name: `laptop-${run}` });
    assert.equal(made.status, 201, made.body);
    const { token, id } = JSON.parse(made.body) as { token: string; id: string };
    const creds = await api(token, 'POST', '/api/v1/kube-credentials');
    assert.equal(creds.status, 200, creds.body);
    const kube = JSON.parse(creds.body) as { server: string; certificateAuthority: string; token: string };
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: kube.server, caData: Buffer.from(kube.certificateAuthority).toString('base64') }],
      users: [{ name: 'u', token: kube.token }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const ns = `${names.mallory}-devtool`;
    await core.listNamespacedPod({ namespace: ns });
    assert.equal((await api('mallory', 'DELETE', `/api/v1/tokens/${id}`)).status, 204);
    const started = Date.now();
    let status: unknown;
    await waitFor(
      'the cluster token refused',
      async () => {
        status = await core.listNamespacedPod({ namespace: ns }).then(
          () => 200,
          (err: { code?: unknown }) => err.code,
        );
        return status === 401;
      },
      60_000,
    ).catch(() => assert.fail(`the cluster token made from a revoked API token still answers ${String(status)} after 60 s`));
    console.log(`cluster token refused ${((Date.now() - started) / 1000).toFixed(1)} s after the revocation`);
  });

  test("a pipeline run's token cannot mint a token, and it goes when the run ends", async () => {
    const ns = `${names.mallory}-devtool`;
    const child = spawnDevtool(['pipeline', 'deploy', '--namespace', ns, '--name', 'slow', '--repository', slowRepo, '--wait'], {
      env: { ...sandboxes.mallory.env, NODE_EXTRA_CA_CERTS: CA_FILE },
      cwd: work,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const ended = new Promise<number | null>((resolve) => child.on('close', resolve));
    // What code in the run could read: its own API token (read here with the cluster's admin rights).
    let runToken = '';
    await waitFor(
      "the run's API token",
      async () => {
        const secrets = (await svc.core.listNamespacedSecret({ namespace: ns, labelSelector: 'devtool.dev/pipeline=slow' })).items;
        const data = secrets.find((s) => s.data?.['api-token'])?.data?.['api-token'];
        runToken = data ? Buffer.from(data, 'base64').toString('utf8') : '';
        return runToken !== '';
      },
      60_000,
    );
    const mint = await api(runToken, 'POST', '/api/v1/tokens', { name: 'forever' });
    assert.equal(mint.status, 403, mint.body);
    assert.match(mint.body, /a pipeline run's token cannot/);
    assert.equal((await api(runToken, 'POST', '/api/v1/kube-credentials')).status, 200, 'what the run needs still works');
    assert.equal(await ended, 0, out);
    const after = await api(runToken, 'GET', '/api/v1/me');
    assert.equal(after.status, 401, `the run's token still works after the run: ${after.body}`);
    const list = JSON.parse((await api('mallory', 'GET', '/api/v1/tokens')).body) as { tokens: { name: string }[] };
    assert.ok(!list.tokens.some((t) => t.name.startsWith('pipeline slow')), JSON.stringify(list));
  });
});
