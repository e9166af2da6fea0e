/**
 * Hosted builds between users who do not trust each other, as plain users of the chart-installed
 * service (`npm run service:up`, with the chart's builder on the node's network): a build step
 * cannot reach what listens on the node's loopback (the registry the service's own images come
 * from), a raw call of a BuildKit control method through the build tunnel is refused, and one
 * user's `RUN --mount=type=cache` is not another's.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { crane, ensureCluster, REGISTRY } from '../../cluster/test-cluster.ts';
import { openBuildTunnel } from '../../src/service/build-tunnel.ts';
import { createSandbox, lines, repoRoot, runDevtool, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';

const URL_ = 'https://devtool.devtool.test';
const NS = 'devtool';
const CA_FILE = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');
const run = randomBytes(3).toString('hex');
const execFileAsync = promisify(execFile);

interface User {
  name: string;
  token: string;
  sandbox: Sandbox;
}

let core: k8s.CoreV1Api;
let work: string;
const users: User[] = [];

async function makeUser(name: string, kubeconfig: string): Promise<User> {
  const made = spawnSync('npm', ['run', '--silent', 'service:user', '--', name], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  assert.equal(made.status, 0, made.stderr);
  const token = made.stdout.trim().split('\n').at(-1)!;
  const mark = { metadata: { labels: { [E2E_NAMESPACE_LABEL]: 'true' } } };
  await core.patchNamespace({ name: `${name}-devtool`, body: mark }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  const user = { name, token, sandbox: createSandbox(kubeconfig) };
  users.push(user);
  const use = build(user, ['context', 'use', URL_, '--token', token], work);
  assert.equal(use.code, 0, use.stderr);
  return user;
}

function build(user: User, args: string[], cwd: string) {
  return runDevtool(args, { cwd, timeoutMs: 360_000, env: { ...user.sandbox.env, DEVTOOL_CA_CERT: CA_FILE } });
}

/** Builds DOCKERFILE as USER and returns one file of the pushed image. */
function buildAndRead(user: User, app: string, dockerfile: string, path: string): string {
  const dir = join(work, app);
  mkdirSync(dir);
  writeFileSync(join(dir, 'Dockerfile'), dockerfile);
  const r = build(user, ['build', '-f', 'Dockerfile'], dir);
  assert.equal(r.code, 0, r.stderr);
  const ref = lines(r.stdout).at(-1)!;
  const tar = join(work, `${app}.tar`);
  crane(['--insecure', 'export', ref, tar]);
  const file = spawnSync('tar', ['-xOf', tar, path], { encoding: 'utf8' });
  assert.equal(file.status, 0, `${path} in ${ref}: ${file.stderr}`);
  return file.stdout;
}

before(async () => {
  const { kubeconfigPath } = await ensureCluster();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  const up = spawnSync('bash', [join(repoRoot, 'scripts/service-up.sh')], { encoding: 'utf8', timeout: 1_500_000 });
  assert.equal(up.status, 0, `service-up failed:\n${up.stderr}`);
  work = mkdtempSync(join(tmpdir(), 'devtool-build-tenants-'));
  const kubeconfig = readFileSync(kubeconfigPath, 'utf8');
  await makeUser(`e2ebta${run}`, kubeconfig);
  await makeUser(`e2ebtb${run}`, kubeconfig);
});

after(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  for (const u of users) {
    await core.deleteNamespace({ name: `${u.name}-devtool` }).catch(() => {});
    await core.deleteNamespacedServiceAccount({ name: `user-${u.name}`, namespace: NS }).catch(() => {});
  }
});

describe('hosted builds between users', () => {
  test("a RUN step cannot reach the node's loopback (the registry on 127.0.0.1:5000)", { timeout: 400_000 }, () => {
    const [a] = users;
    // The registry's API root answers 200 to anyone who reaches it; the step records what it got.
    const probe = "exec 3<>/dev/tcp/127.0.0.1/5000 && printf 'GET /v2/ HTTP/1.0\\r\\n\\r\\n' >&3 && head -n1 <&3";
    const seen = buildAndRead(
      a!,
      `bt-net-${run}`,
      `FROM ${REGISTRY}/debian:bookworm\nRUN (timeout 10 bash -c "${probe}" || echo unreachable) > /registry.txt # ${run}\n`,
      'registry.txt',
    );
    assert.equal(seen.trim(), 'unreachable', `the step reached the node's registry: ${seen}`);
  });

  test('a raw call of a BuildKit control method through the tunnel is refused', { timeout: 300_000 }, async () => {
    const [a] = users;
    const tunnel = await openBuildTunnel({ url: URL_, token: a!.token, ca: readFileSync(CA_FILE, 'utf8') });
    try {
      // Asynchronously: the tunnel's loopback listener runs in this process.
      const probe = await execFileAsync('go', ['run', './probe', tunnel.address], {
        cwd: join(repoRoot, 'buildkit/client'),
        encoding: 'utf8',
        timeout: 240_000,
        env: { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin`, GOFLAGS: '-mod=readonly' },
      });
      const outcomes = lines(probe.stdout).map((l) => JSON.parse(l) as { method: string; ok: boolean; code?: string });
      assert.deepEqual(
        outcomes.map((o) => [o.method, o.ok, o.code]),
        [
          ['DiskUsage', false, 'PermissionDenied'],
          ['ListenBuildHistory', false, 'PermissionDenied'],
          ['Prune', false, 'PermissionDenied'],
        ],
      );
    } finally {
      await tunnel.close();
    }
  });

  test("one user's RUN --mount=type=cache is not another's: B neither sees nor poisons A's", { timeout: 600_000 }, () => {
    const [a, b] = users;
    const step = (who: string) =>
      `FROM ${REGISTRY}/debian:bookworm\n` +
      `RUN --mount=type=cache,id=shared,target=/c (cat /c/marker 2>/dev/null || echo empty) > /seen.txt && echo ${who}-${run} > /c/marker\n`;
    assert.equal(buildAndRead(a!, `bt-ca-${run}`, step('writer-a'), 'seen.txt').trim(), 'empty', "A's cache starts empty");
    assert.equal(buildAndRead(b!, `bt-cb-${run}`, step('writer-b'), 'seen.txt').trim(), 'empty', "B does not see A's marker");
    // A's own cache is A's: B's write did not land there.
    assert.equal(buildAndRead(a!, `bt-ca2-${run}`, step('again-a'), 'seen.txt').trim(), `writer-a-${run}`);
  });
});
