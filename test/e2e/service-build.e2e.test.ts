/**
 * Hosted builds, end to end: the service installed by its chart (`npm run service:up`,
 * with the chart's builder), a user who is not an admin and has no Kubernetes rights on the
 * service's namespace (no pods/portforward: the peers' failure), on a service context:
 * `devtool build` runs on the cluster's BuildKit daemon through the service's build tunnel and
 * pushes to the registry the service announces; a `--secret` reaches its RUN step and no log nor
 * the image; `deploy` of a Compose app with a build section builds in the cluster and runs; a
 * refused token is one line.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { crane, ensureCluster, REGISTRY } from '../../cluster/test-cluster.ts';
import { createSandbox, lines, repoRoot, runDevtool, type Sandbox, spawnDevtool } from './cli.ts';
import { ServiceClient } from '../../src/service/client.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';

const URL_ = 'https://devtool.devtool.test';
const NS = 'devtool';
const CA_FILE = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');
const run = randomBytes(3).toString('hex');
const user = `e2ebld${run}`;
const SECRET = `hosted-secret-${randomBytes(8).toString('hex')}`;

let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let sandbox: Sandbox;
let work: string;
let token: string;
const startedAt = new Date();

function devtool(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }) {
  return runDevtool(args, { cwd: opts.cwd, timeoutMs: opts.timeoutMs ?? 300_000, env: { ...sandbox.env, DEVTOOL_CA_CERT: CA_FILE, ...opts.env } });
}

/** One file of an image's flattened filesystem, and the whole filesystem as text for searching. */
function imageFiles(ref: string): { file: (path: string) => string; all: string } {
  const tar = join(work, `${ref.replace(/[^a-z0-9]/gi, '_')}.tar`);
  crane(['--insecure', 'export', ref, tar]);
  return {
    file: (path) => {
      const r = spawnSync('tar', ['-xOf', tar, path], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${path} in ${ref}: ${r.stderr}`);
      return r.stdout;
    },
    all: readFileSync(tar).toString('latin1'),
  };
}

/** Everything the service's and the builder's pods logged since the test started. */
async function clusterLogs(): Promise<string> {
  const pods = (await core.listNamespacedPod({ namespace: NS })).items;
  let text = '';
  for (const p of pods) {
    const component = p.metadata?.labels?.['app.kubernetes.io/component'];
    if (component !== 'service' && component !== 'builder') continue;
    for (const c of p.spec?.containers ?? []) {
      const sinceSeconds = Math.ceil((Date.now() - startedAt.getTime()) / 1000) + 60;
      text += await core.readNamespacedPodLog({ name: p.metadata!.name!, namespace: NS, container: c.name, sinceSeconds }).catch(() => '');
    }
  }
  return text;
}

before(async () => {
  const { kubeconfigPath } = await ensureCluster();
  kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  const up = spawnSync('bash', [join(repoRoot, 'scripts/service-up.sh')], { encoding: 'utf8', timeout: 1_500_000 });
  assert.equal(up.status, 0, `service-up failed:\n${up.stderr}`);
  assert.equal(up.stdout.trim().split('\n').at(-1), URL_);
  const made = spawnSync('npm', ['run', '--silent', 'service:user', '--', user], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  assert.equal(made.status, 0, made.stderr);
  token = made.stdout.trim().split('\n').at(-1)!;
  const mark = { metadata: { labels: { [E2E_NAMESPACE_LABEL]: 'true' } } };
  const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  await core.patchNamespace({ name: `${user}-devtool`, body: mark }, merge);
  sandbox = createSandbox(readFileSync(kubeconfigPath, 'utf8'));
  work = mkdtempSync(join(tmpdir(), 'devtool-service-build-'));
  const use = devtool(['context', 'use', URL_, '--token', token], { cwd: work });
  assert.equal(use.code, 0, use.stderr);
});

after(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  if (!core) return;
  await core.deleteNamespace({ name: `${user}-devtool` }).catch(() => {});
  await core.deleteNamespacedServiceAccount({ name: `user-${user}`, namespace: NS }).catch(() => {});
});

describe('hosted builds on a service context', () => {
  test("the service offers builds, and the user cannot port-forward in the service's namespace", async () => {
    const c = spawnSync('curl', ['-sS', '--max-time', '10', '--cacert', CA_FILE, `${URL_}/api/v1/info`], { encoding: 'utf8' });
    const info = JSON.parse(c.stdout) as { capabilities: string[]; registry?: string };
    assert.ok(info.capabilities.includes('builds'), c.stdout);
    assert.equal(info.registry, REGISTRY);
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
    const review = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user: `system:serviceaccount:${NS}:user-${user}`,
          resourceAttributes: { namespace: NS, verb: 'create', resource: 'pods', subresource: 'portforward' },
        },
      },
    });
    assert.equal(review.status?.allowed, false, 'the test user must not be able to port-forward to the builder');
  });

  test("the builder is not open to anyone else: without the service's client certificate its gateway refuses", async () => {
    const pod = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/component=builder' })).items[0];
    assert.ok(pod?.status?.podIP, 'the chart runs the builder');
    // On the node's network (hostNetwork): reachable from this machine, so TLS must stop it.
    const refused = await new Promise<string>((resolve) => {
      const s = tlsConnect({ host: pod.status!.podIP!, port: 1235, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
      s.on('secureConnect', () => s.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
      s.on('data', () => resolve('answered'));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      s.setTimeout(10_000, () => resolve('timeout'));
    });
    assert.equal(refused, 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
  });

  test('`devtool build` with --secret: built in the cluster, pushed to the announced registry, the secret only in its step', { timeout: 400_000 }, async () => {
    const app = join(work, `hb-${run}`);
    mkdirSync(app);
    writeFileSync(join(app, 'secret.txt'), SECRET);
    writeFileSync(join(app, 'hello.txt'), `hello ${run}\n`);
    writeFileSync(
      join(app, 'Dockerfile'),
      [
        `FROM ${REGISTRY}/debian:bookworm`,
        'COPY hello.txt /hello.txt',
        // The secret reaches the step (its hash is kept; a wrong or missing one fails the build).
        'RUN --mount=type=secret,id=token,required=true \\',
        `  test "$(sha256sum < /run/secrets/token | cut -d' ' -f1)" = "${sha256(SECRET)}" && echo secret-ok > /secret-ok.txt`,
        '',
      ].join('\n'),
    );
    const r = devtool(['build', '-f', 'Dockerfile', '--secret', 'id=token,src=secret.txt'], { cwd: app, timeoutMs: 360_000 });
    assert.equal(r.code, 0, r.stderr);
    const ref = lines(r.stdout).at(-1)!;
    assert.match(ref, new RegExp(`^${REGISTRY}/hb-${run}:devtool-[0-9a-f]{24}$`));
    assert.match(r.stderr, /the hosted builder of https:\/\/devtool\.devtool\.test/);
    assert.match(r.stderr, /RUN --mount=type=secret/, "BuildKit's progress reaches the user");
    crane(['--insecure', 'digest', ref]);
    const image = imageFiles(ref);
    assert.equal(image.file('hello.txt'), `hello ${run}\n`);
    assert.equal(image.file('secret-ok.txt'), 'secret-ok\n');
    assert.ok(!image.all.includes(SECRET), 'the secret is in no layer of the image');
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET), 'nor in the CLI output');
    const logs = await clusterLogs();
    assert.match(logs, new RegExp(`"user":"${user}".*build tunnel opened`), 'the service logged the tunnel (the log is the one searched)');
    assert.ok(!logs.includes(SECRET), 'nor in the service or builder logs');
    assert.ok(!logs.includes(token), 'and the token neither');
  });

  test('`build` and `deploy` of a Compose app with a build section: built in the cluster, run, a stored secret in its environment', {
    timeout: 400_000,
  }, async () => {
    const app = join(work, `hbc-${run}`);
    mkdirSync(join(app, 'web'), { recursive: true });
    writeFileSync(join(app, 'web', 'index.html'), `hosted build ${run}\n`);
    writeFileSync(join(app, 'web', 'Dockerfile'), `FROM ${REGISTRY}/nginx:1\nCOPY index.html /usr/share/nginx/html/index.html\n`);
    writeFileSync(
      join(app, 'docker-compose.yml'),
      ['services:', '  web:', '    build: web', '    environment:', '      GREETING: ${HOSTED_GREETING}', '    ports:', '      - 8080:80', ''].join('\n'),
    );
    // `build` reads the Compose file with the stored secrets as `deploy` does: no "is not set".
    await new ServiceClient({ url: URL_, token, ca: readFileSync(CA_FILE, 'utf8') }).call('putSecret', {
      params: { name: 'HOSTED_GREETING' },
      body: { value: `stored ${run}` },
    });
    const b = devtool(['build'], { cwd: app, timeoutMs: 360_000 });
    assert.equal(b.code, 0, b.stderr);
    assert.doesNotMatch(b.stderr, /HOSTED_GREETING is not set/);
    assert.match(b.stderr, /the hosted builder of https:\/\/devtool\.devtool\.test/);
    assert.equal(imageFiles(lines(b.stdout).at(-1)!).file('usr/share/nginx/html/index.html'), `hosted build ${run}\n`);
    const d = devtool(['deploy', '--wait', '--timeout', '4m'], { cwd: app, timeoutMs: 360_000 });
    assert.equal(d.code, 0, `deploy failed:\n${d.stdout}\n${d.stderr}`);
    assert.match(d.stderr, /image web is up to date/, 'deploy finds what `build` pushed');
    const pods = (await core.listNamespacedPod({ namespace: `${user}-devtool` })).items;
    const web = pods.find((p) => p.status?.phase === 'Running' && p.spec?.containers.some((c) => c.image?.startsWith(`${REGISTRY}/`)));
    assert.ok(web, `a running pod of the built image: ${pods.map((p) => `${p.metadata?.name} ${p.status?.phase} ${p.spec?.containers[0]?.image}`).join(', ')}`);
    const exec = spawnSync(
      'bash',
      [join(repoRoot, 'cluster/cluster.sh'), 'kubectl', '-n', `${user}-devtool`, 'exec', web.metadata!.name!, '--', 'cat', '/usr/share/nginx/html/index.html'],
      { encoding: 'utf8' },
    );
    assert.equal(exec.stdout, `hosted build ${run}\n`, exec.stderr);
    const env = spawnSync(
      'bash',
      [join(repoRoot, 'cluster/cluster.sh'), 'kubectl', '-n', `${user}-devtool`, 'exec', web.metadata!.name!, '--', 'printenv', 'GREETING'],
      { encoding: 'utf8' },
    );
    assert.equal(env.stdout, `stored ${run}\n`, 'the stored secret reached the container');
  });

  // Caddy 2.6 (the front door) closes upgraded connections whenever it loads a new configuration,
  // which any Ingress change causes: the CLI builds again, and the steps that finished are cached.
  test('a build whose tunnel the front door cuts (an Ingress changed elsewhere) is run again and succeeds', { timeout: 300_000 }, async () => {
    const app = join(work, `hbx-${run}`);
    mkdirSync(app);
    writeFileSync(
      join(app, 'Dockerfile'),
      `FROM ${REGISTRY}/debian:bookworm\nRUN echo "run ${run}-cut" > /first.txt\nRUN echo "run ${run}-slow" && sleep 20\n`,
    );
    const ns = `${user}-devtool`;
    const net = kc.makeApiClient(k8s.NetworkingV1Api);
    await core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'reload' }, spec: { ports: [{ port: 80 }] } } });
    const child = spawnDevtool(['build', '-f', 'Dockerfile'], { cwd: app, env: { ...sandbox.env, DEVTOOL_CA_CERT: CA_FILE } });
    let stderr = '';
    let changed: Promise<unknown> | undefined;
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (!changed && stderr.includes(`run ${run}-slow`)) {
          const rule = {
            host: `reload-${ns}.devtool.test`,
            http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'reload', port: { number: 80 } } } }] },
          };
          changed = net.createNamespacedIngress({
            namespace: ns,
            body: { metadata: { name: 'reload' }, spec: { ingressClassName: 'devtool', rules: [rule] } },
          });
        }
      });
      child.on('close', resolve);
    });
    await changed;
    assert.equal(code, 0, stderr);
    assert.match(stderr, /the connection to the hosted builder was cut \(.*\): building again \(2\/3\)/);
    const again = stderr.slice(stderr.indexOf('building again'));
    const step = new RegExp(`#(\\d+) \\[2/3\\] RUN echo "run ${run}-cut"`).exec(again);
    assert.ok(step, `the second attempt shows the first step:\n${again}`);
    assert.match(again, new RegExp(`#${step[1]} CACHED`), 'the step that finished before the cut is cached, not run again');
  });

  // A frozen builder (SIGSTOP of its gateway, which ends the client's gRPC connection: the
  // connections stay open, nothing answers) stands for a dead path. The keepalive pings travel
  // through the tunnel, so the limits hold end to end.
  test('DEVTOOL_KEEPALIVE_CLIENT_* apply through the tunnel: a builder gone silent ends the build after time + timeout', { timeout: 200_000 }, async () => {
    const app = join(work, `hbk-${run}`);
    mkdirSync(app);
    writeFileSync(join(app, 'Dockerfile'), `FROM ${REGISTRY}/debian:bookworm\nRUN echo "run ${run}-ka" && sleep 90\n`);
    const pids = spawnSync('pgrep', ['-f', '^/usr/local/bin/devtool-buildkit-gateway '], { encoding: 'utf8' }).stdout.trim().split('\n');
    assert.equal(pids.length, 1, `one builder gateway on this node: ${pids.join(',')}`);
    const pid = Number(pids[0]);
    const env = { ...sandbox.env, DEVTOOL_CA_CERT: CA_FILE, DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: '10000', DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS: '3000' };
    const child = spawnDevtool(['build', '-f', 'Dockerfile'], { cwd: app, env });
    let stderr = '';
    let frozenAt = 0;
    try {
      const code = await new Promise<number | null>((resolve) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (!frozenAt && stderr.includes(`run ${run}-ka`)) {
            process.kill(pid, 'SIGSTOP');
            frozenAt = Date.now();
          }
        });
        child.on('close', resolve);
      });
      const silentFor = Date.now() - frozenAt;
      assert.ok(frozenAt > 0, `the step ran: ${stderr}`);
      assert.equal(code, 1, stderr);
      assert.match(lines(stderr).at(-1) ?? '', /^Error: building .*failed: .*keepalive/);
      assert.ok(silentFor >= 10_000 && silentFor < 40_000, `failed after ${silentFor} ms of silence`);
    } finally {
      if (frozenAt) process.kill(pid, 'SIGCONT');
      child.kill();
    }
  });

  test('a refused token is one line, and nothing is built', { timeout: 120_000 }, () => {
    const app = join(work, `hbr-${run}`);
    mkdirSync(app);
    writeFileSync(join(app, 'Dockerfile'), `FROM ${REGISTRY}/debian:bookworm\nRUN echo never-built-${run}\n`);
    const r = devtool(['build', '-f', 'Dockerfile'], {
      cwd: app,
      env: { DEVTOOL_URL: URL_, DEVTOOL_TOKEN: `dvt_${'A'.repeat(43)}` },
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      lines(r.stderr).at(-1),
      `Error: the devtool service at ${URL_} refused the build tunnel: token revoked or expired: log in again with devtool context use ${URL_}`,
    );
    assert.doesNotMatch(r.stderr, new RegExp(`never-built-${run}`));
  });
});

function sha256(text: string): string {
  return spawnSync('sha256sum', { input: text, encoding: 'utf8' }).stdout.split(' ')[0]!;
}
