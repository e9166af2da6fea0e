/**
 * `devtool logs` end to end: the built CLI reads the logs of a Compose application of two
 * services on the local cluster, each printing lines of its own: both services, --tail per
 * container, --since, an unknown service, --follow through a pod's replacement, and a closed pipe.
 * On a service context (the service its chart installed), a user reads the logs of her own
 * environment with her own credentials, and another user's namespace is refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPath, createSandbox, lines, runDevtool, type Sandbox, spawnDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, REGISTRY, runningPod, type ClusterSandbox } from './cluster.ts';
import { type InstalledService, installedService } from './installed-service.ts';
import { waitFor } from './wait.ts';

/** The folder names the environment, as it does for deploy. */
const ENV = 'logsapp';
let s: ClusterSandbox;
let folder: string;

/** A service that says it started, then numbers a line every half second, forever. */
const printer = (name: string) => [
  `  ${name}:`,
  `    image: ${REGISTRY}/debian:bookworm`,
  `    command: ["sh", "-c", "echo ${name} started; i=0; while true; do i=$$((i+1)); echo ${name} line $$i; sleep 0.5; done"]`,
];

before(async () => {
  s = await clusterSandbox('e2e-logs');
  folder = join(mkdtempSync(join(tmpdir(), 'devtool-logs-')), ENV);
  mkdirSync(folder);
  writeFileSync(join(folder, 'compose.yaml'), ['services:', ...printer('alpha'), ...printer('beta'), ''].join('\n'));
  const r = devtool(['deploy', '--wait', '--timeout', '3m'], 240_000);
  assert.equal(r.code, 0, `deploy failed:\n${r.stderr}`);
});
after(async () => {
  if (s) await deleteNamespace(s);
});

function devtool(args: string[], timeoutMs = 60_000) {
  return runDevtool([...args, '--namespace', s.namespace], { cwd: folder, timeoutMs, env: s.env });
}

/** The lines of `out` from `service`, without their [service/pod] prefix. */
function linesOf(out: string, service: string): string[] {
  return lines(out)
    .filter((l) => l.startsWith(`[${service}/`))
    .map((l) => l.slice(l.indexOf('] ') + 2));
}

test('both services, each line prefixed [service/pod], plain in a pipe', { timeout: 60_000 }, async () => {
  // Some lines of each first.
  await waitFor('a few lines of each service', () => linesOf(devtool(['logs']).stdout, 'beta').length >= 4, 30_000);
  const r = devtool(['logs']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const alphaPod = await runningPod(s.core, s.namespace, 'devtool.dev/service=alpha');
  for (const service of ['alpha', 'beta']) {
    const own = linesOf(r.stdout, service);
    assert.equal(own[0], `${service} started`, r.stdout);
    assert.match(own.at(-1)!, new RegExp(`^${service} line \\d+$`));
  }
  assert.ok(r.stdout.includes(`[alpha/${alphaPod}] alpha line 1\n`), r.stdout);
  assert.ok(!r.stdout.includes('\u001b['), 'no colour in a pipe');
  // A service named: only its lines.
  const beta = devtool(['logs', 'beta']);
  assert.equal(beta.code, 0, beta.stderr);
  assert.deepEqual(linesOf(beta.stdout, 'alpha'), []);
  assert.ok(linesOf(beta.stdout, 'beta').length >= 4);
});

test('--tail per container, --since, --timestamps; a bad flag and an unknown service are one line', { timeout: 60_000 }, async () => {
  const tail = devtool(['logs', '--tail', '3']);
  assert.equal(tail.code, 0, tail.stderr);
  for (const service of ['alpha', 'beta']) {
    const own = linesOf(tail.stdout, service);
    assert.equal(own.length, 3, tail.stdout);
    assert.ok(own.every((l) => l.startsWith(`${service} line `)));
  }
  assert.equal(linesOf(devtool(['logs', '--tail', '0']).stdout, 'alpha').length, 0);

  // The pods have printed for some seconds: 2s back holds a few lines, not the first.
  await waitFor('alpha to have printed for 6 s', () => linesOf(devtool(['logs', 'alpha']).stdout, 'alpha').length >= 12, 30_000);
  const asked = Date.now();
  const since = devtool(['logs', 'alpha', '--since', '2s', '--timestamps']);
  assert.equal(since.code, 0, since.stderr);
  const recent = linesOf(since.stdout, 'alpha');
  assert.ok(recent.length >= 2 && recent.length <= 8, since.stdout);
  for (const line of recent) {
    const [time, ...text] = line.split(' ');
    assert.ok(Date.parse(time!) >= asked - 3_000, `${line}: older than --since 2s`);
    assert.match(text.join(' '), /^alpha line \d+$/);
  }

  const bad = devtool(['logs', '--tail=-1']);
  assert.deepEqual([bad.code, lines(bad.stderr).length], [2, 1]);
  assert.match(bad.stderr, /invalid value "-1" for flag --tail/);
  assert.match(devtool(['logs', '--since', '10x']).stderr, /invalid value "10x" for flag --since/);
  const unknown = devtool(['logs', 'gamma']);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, `Error: no service "gamma" in environment ${ENV} in namespace ${s.namespace}; its services: alpha, beta\n`);
});

test('--follow picks up the pod that replaces a deleted one, and ends at Ctrl-C with 0', { timeout: 120_000 }, async () => {
  const old = await runningPod(s.core, s.namespace, 'devtool.dev/service=alpha');
  const child = spawnDevtool(['logs', 'alpha', '--follow', '--tail', '1', '--namespace', s.namespace], { cwd: folder, env: s.env });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await waitFor('new lines of the followed pod', () => lines(out).filter((l) => l.startsWith(`[alpha/${old}] `)).length >= 3, 20_000);
    await s.core.deleteNamespacedPod({ name: old, namespace: s.namespace, gracePeriodSeconds: 0 });
    await waitFor(
      'the first line of the replacement pod',
      () => lines(out).some((l) => /^\[alpha\/alpha-[a-z0-9-]+\] alpha started$/.test(l) && !l.startsWith(`[alpha/${old}]`)),
      60_000,
    );
    const replacement = /^\[alpha\/(alpha-[a-z0-9-]+)\] alpha started$/m.exec(out)![1]!;
    await waitFor('its next lines', () => out.includes(`[alpha/${replacement}] alpha line 2\n`), 20_000);
    assert.ok(!out.includes('[beta/'), 'only the service asked for');
  } finally {
    child.kill('SIGINT');
  }
  const started = Date.now();
  assert.equal(await exited, 0, err);
  assert.ok(Date.now() - started < 3_000, `ended ${Date.now() - started} ms after Ctrl-C`);
  assert.equal(err, '');
});

test('a closed pipe (logs -f | head -3) ends it at once, quietly, with 0', { timeout: 60_000 }, async () => {
  const started = Date.now();
  const r = spawnSync('bash', ['-c', `node ${cliPath} logs -f --namespace ${s.namespace} | head -3; echo "status \${PIPESTATUS[*]}" >&2`], {
    cwd: folder,
    env: { PATH: process.env.PATH, LANG: 'C.UTF-8', TZ: 'UTC', ...s.env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const took = Date.now() - started;
  assert.equal(lines(r.stdout).length, 3, r.stdout);
  assert.equal(r.stderr, 'status 0 0\n');
  assert.ok(took < 10_000, `took ${took} ms`);
});

describe("on a service context: her own credentials, not another user's namespace", () => {
  const run = randomBytes(3).toString('hex');
  const users = { ann: `e2elga${run}`, bob: `e2elgb${run}` };
  let svc: InstalledService;
  let ann: Sandbox;
  const as = (args: string[], timeoutMs = 60_000) => runDevtool(args, { cwd: folder, env: ann.env, timeoutMs });

  before(async () => {
    svc = await installedService();
    const token = await svc.createUser(users.ann);
    await svc.createUser(users.bob);
    ann = createSandbox();
    const use = runDevtool(['context', 'use', svc.url, '--token', token], { env: { ...ann.env, DEVTOOL_CA_CERT: svc.caFile }, timeoutMs: 30_000 });
    assert.equal(use.code, 0, use.stderr);
    const deploy = as(['deploy', '--wait', '--timeout', '3m'], 240_000);
    assert.equal(deploy.code, 0, `deploy failed:\n${deploy.stderr}`);
  });
  after(async () => {
    await svc?.removeUsers();
  });

  test('her environment in her namespace; his namespace refused in one line', { timeout: 120_000 }, async () => {
    await waitFor('a line of each service', () => linesOf(as(['logs']).stdout, 'beta').length >= 2, 30_000);
    const own = as(['logs', '--tail', '2']);
    assert.equal(own.code, 0, own.stderr);
    assert.equal(linesOf(own.stdout, 'alpha').length, 2, own.stdout);
    assert.equal(linesOf(own.stdout, 'beta').length, 2, own.stdout);
    const his = as(['logs', '--all', '--namespace', `${users.bob}-devtool`]);
    assert.equal(his.code, 1, his.stderr);
    assert.equal(lines(his.stderr).length, 1, his.stderr);
    assert.match(his.stderr, /forbidden/i);
    assert.equal(his.stdout, '');
  });
});
