/**
 * Compose deploys end to end, failures: bad input applies nothing; a deploy that fails names the service
 * and the reason (image pull error, crash loop, failed Job) with the last lines of its log, exits
 * non-zero, and records the environment as `error`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lines, runDevtool, spawnDevtool } from './cli.ts';
import { runInPty } from './pty.ts';
import { clusterSandbox, deleteNamespace, REGISTRY, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
before(async () => {
  s = await clusterSandbox('e2e-fail');
});
after(async () => {
  if (s) await deleteNamespace(s);
});

function deployText(name: string, compose: string, extra: string[] = [], timeoutMs = 240_000) {
  const dir = mkdtempSync(join(tmpdir(), `devtool-${name}-`));
  writeFileSync(join(dir, 'compose.yaml'), compose);
  return runDevtool(['deploy', '--name', name, '--namespace', s.namespace, '--timeout', '3m', ...extra], { cwd: dir, env: s.env, timeoutMs });
}

async function recordedState(name: string): Promise<Record<string, string> | undefined> {
  try {
    return (await s.core.readNamespacedConfigMap({ name: `devtool-env-${name}`, namespace: s.namespace })).data;
  } catch {
    return undefined;
  }
}

test('bad input: one located line, nothing applied, no state recorded', async () => {
  const r = deployText('bad', `services:\n  web:\n    image: ${REGISTRY}/nginx:1\n    prots: ["80"]\n`);
  assert.equal(r.code, 1);
  const errLines = lines(r.stderr);
  assert.equal(errLines.length, 1, r.stderr);
  assert.match(errLines[0]!, /^Error: compose\.yaml:4:5: .*prots.*ports/);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  assert.equal((await apps.listNamespacedDeployment({ namespace: s.namespace })).items.length, 0);
  assert.equal(await recordedState('bad'), undefined);

  // A bad port of a dependency awaited healthy is named where it is written, not at depends_on.
  const port = deployText(
    'badport',
    `services:\n  web:\n    image: ${REGISTRY}/nginx:1\n    depends_on:\n      db: {condition: service_healthy}\n` +
      `  db:\n    image: ${REGISTRY}/redis:7\n    ports: ["6379:654321"]\n`,
  );
  assert.equal(port.code, 1);
  assert.deepEqual(lines(port.stderr), ['Error: compose.yaml:8:13: field services.db.ports[0]: port 654321 is out of range: ports are 1 to 65535']);
});

test('a long wait says what it awaits and since when; colour only on a terminal, never with NO_COLOR', { timeout: 300_000 }, async () => {
  const compose = [
    'services:',
    '  front:',
    `    image: ${REGISTRY}/debian:bookworm`,
    '    command: [sleep, infinity]',
    '    depends_on:',
    '      seed: {condition: service_completed_successfully}',
    '  seed:',
    `    image: ${REGISTRY}/debian:bookworm`,
    '    command: [sleep, "14"]',
    '    restart: "no"',
    '',
  ].join('\n');
  const slow = deployText('slow', compose);
  assert.equal(slow.code, 0, slow.stderr);
  assert.match(slow.stderr, /^… still waiting for seed \(service_completed_successfully\) \(10s\)$/m);
  assert.ok(!slow.stderr.includes('\u001b'), 'no colour into a pipe');

  // On a terminal the marks and "Error:" are coloured; NO_COLOR turns every colour off.
  const dir = mkdtempSync(join(tmpdir(), 'devtool-colour-'));
  writeFileSync(join(dir, 'compose.yaml'), `services:\n  web:\n    image: ${REGISTRY}/nginx:1\n    prots: ["80"]\n`);
  for (const noColor of [undefined, '1']) {
    const pty = runInPty(['deploy', '--namespace', s.namespace], { cwd: dir, env: { ...s.env, ...(noColor ? { NO_COLOR: noColor } : {}) } });
    assert.equal(await pty.exit(60_000), 1, pty.output());
    assert.match(pty.output(), /compose\.yaml:4:5: .*prots/);
    if (noColor) assert.ok(!pty.raw().includes('\u001b['), JSON.stringify(pty.raw()));
    else assert.ok(pty.raw().includes('\u001b[31mError:\u001b[39m'), JSON.stringify(pty.raw()));
  }
});

test('a missing image fails fast with the image pull error, and the state says error', { timeout: 300_000 }, async () => {
  const r = deployText('pull', `services:\n  api:\n    image: ${REGISTRY}/does-not-exist:1\n`, ['--wait']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /service "api" failed: image pull error for localhost:5000\/does-not-exist:1/);
  const state = await recordedState('pull');
  assert.equal(state?.status, 'error');
  assert.match(state?.error ?? '', /image pull error/);
});

test('a volume that can never bind fails fast, naming the claim and why, instead of timing out', { timeout: 300_000 }, async () => {
  const started = Date.now();
  const r = deployText(
    'noclass',
    `services:\n  db:\n    image: ${REGISTRY}/redis:7\n    volumes: ["data:/data"]\nvolumes:\n  data:\n    driver_opts: {class: no-such-class}\n`,
    ['--wait'],
  );
  assert.equal(r.code, 1, r.stderr);
  assert.match(lines(r.stderr).at(-1)!, /service "db" failed: pod cannot be scheduled: persistent volume claim data is Pending: .*no-such-class.* not found/);
  assert.ok(Date.now() - started < 120_000, 'well before the 3m timeout');
  assert.equal((await recordedState('noclass'))?.status, 'error');
});

test('an object of another environment is never taken over', { timeout: 120_000 }, async () => {
  // "pull" (above) owns Deployment/api in this namespace.
  const r = deployText('other', `services:\n  api:\n    image: ${REGISTRY}/nginx:1\n`);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    lines(r.stderr).at(-1)!,
    /^Error: cannot deploy environment "other" in namespace .*: Deployment\/api belongs to environment "pull"\. Deploy to another namespace/,
  );
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const api = await apps.readNamespacedDeployment({ name: 'api', namespace: s.namespace });
  assert.equal(api.metadata?.labels?.['devtool.dev/environment'], 'pull');
});

test('a crash loop is reported with the last lines of the log', { timeout: 300_000 }, async () => {
  const r = deployText(
    'crash',
    `services:\n  worker:\n    image: ${REGISTRY}/debian:bookworm\n    entrypoint: ["sh", "-c", "echo cannot reach the config server; exit 3"]\n`,
    ['--wait'],
  );
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /service "worker" failed: crash loop: container worker keeps exiting \(exit code 3\)/);
  assert.match(r.stderr, /cannot reach the config server/);
});

test('a readiness probe that keeps failing is reported as a failed probe', { timeout: 300_000 }, async () => {
  const compose = [
    'services:',
    '  gate:',
    `    image: ${REGISTRY}/nginx:1`,
    '    healthcheck:',
    '      test: ["CMD-SHELL", "echo upstream not configured; exit 1"]',
    '      interval: 1s',
    '',
  ].join('\n');
  const r = deployText('probe', compose, ['--wait']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /service "gate" failed: failed probe: Readiness probe failed: upstream not configured/);
});

test('deploy --dry-run prints the objects and touches nothing', async () => {
  const r = deployText('dry', `services:\n  api:\n    image: ${REGISTRY}/nginx:1\n    ports: ["80"]\n`, ['--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  const kinds = [...r.stdout.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]);
  assert.deepEqual(kinds, ['Service', 'Deployment']);
  assert.match(r.stdout, /devtool\.dev\/environment: dry/);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const found = await apps.listNamespacedDeployment({ namespace: s.namespace, labelSelector: 'devtool.dev/environment=dry' });
  assert.equal(found.items.length, 0);
  assert.equal(await recordedState('dry'), undefined);
});

test('a failed one-off Job stops the deploy of what depends on it', { timeout: 300_000 }, async () => {
  const compose = [
    'services:',
    '  migrate:',
    `    image: ${REGISTRY}/debian:bookworm`,
    '    restart: "no"',
    '    entrypoint: ["sh", "-c", "echo relation users already exists >&2; exit 2"]',
    '  web:',
    `    image: ${REGISTRY}/nginx:1`,
    '    depends_on:',
    '      migrate: { condition: service_completed_successfully }',
    '',
  ].join('\n');
  const r = deployText('job', compose);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /service "migrate" failed: .*(exited with code 2|job failed)/);
  assert.match(r.stderr, /relation users already exists/);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const web = (await apps.listNamespacedDeployment({ namespace: s.namespace, labelSelector: 'devtool.dev/environment=job' })).items;
  assert.equal(web.length, 0, 'web, which depends on the failed migration, was never applied');
});

test('Ctrl-C during deploy --wait: exit 130, a line saying what is left and the ways on, the state says interrupted', { timeout: 300_000 }, async () => {
  const compose = [
    'services:',
    '  slow:',
    `    image: ${REGISTRY}/debian:bookworm`,
    '    restart: "no"',
    '    entrypoint: ["sleep", "600"]',
    '  web:',
    `    image: ${REGISTRY}/nginx:1`,
    '    depends_on:',
    '      slow: { condition: service_completed_successfully }',
    '',
  ].join('\n');
  const dir = mkdtempSync(join(tmpdir(), 'devtool-intr-'));
  writeFileSync(join(dir, 'compose.yaml'), compose);
  const proc = spawnDevtool(['deploy', '--name', 'intr', '--namespace', s.namespace, '--wait', '--timeout', '3m'], { cwd: dir, env: s.env });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const waiting = Date.now();
  while (!stderr.includes('web: waiting for slow')) {
    assert.ok(Date.now() - waiting < 120_000, `never waited for slow:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const sent = Date.now();
  proc.kill('SIGINT');
  assert.equal(await exited, 130, stderr);
  assert.ok(Date.now() - sent < 10_000, `took ${Date.now() - sent} ms to end`);
  const last = lines(stderr).at(-1)!;
  assert.match(last, /^Error: interrupted: environment intr in namespace \S+ is partly deployed .* recorded as interrupted; /);
  assert.match(last, /; run 'devtool deploy' again to finish it, or 'devtool destroy' to remove it$/);
  const state = await recordedState('intr');
  assert.equal(state?.status, 'interrupted');
  assert.match(state?.error ?? '', /interrupted/);
  const apps = s.kc.makeApiClient(k8s.AppsV1Api);
  const web = (await apps.listNamespacedDeployment({ namespace: s.namespace, labelSelector: 'devtool.dev/environment=intr' })).items;
  assert.equal(web.length, 0, 'web, which waited for slow, was never applied');
});

test('cheap checks before the builds: no endpoint domain, or a cluster that cannot be reached, is said before any image is built', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-cheap-'));
  writeFileSync(join(dir, 'Dockerfile'), `FROM ${REGISTRY}/nginx:1\n`);
  writeFileSync(join(dir, 'compose.yaml'), 'services:\n  web:\n    build: .\n    ports: ["8080:80"]\n');
  // No Docker daemon: a deploy that built first would fail on that instead.
  const noDocker = { ...s.env, DOCKER_HOST: 'unix:///nonexistent' };
  const noDomain = runDevtool(['deploy', '--name', 'cheap', '--namespace', s.namespace], { cwd: dir, env: noDocker, timeoutMs: 60_000 });
  assert.equal(noDomain.code, 1, noDomain.stderr);
  assert.match(lines(noDomain.stderr).at(-1)!, /^Error: compose\.yaml:\d+:\d+: public endpoints need an endpoint domain/);
  assert.doesNotMatch(noDomain.stderr, /build|Docker daemon/i);

  const unreachable = join(dir, 'unreachable.kubeconfig');
  writeFileSync(
    unreachable,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: gone, context: {cluster: gone, user: u, namespace: default}}]',
      'current-context: gone',
      '',
    ].join('\n'),
  );
  const env = { ...noDocker, KUBECONFIG: unreachable, DEVTOOL_ENDPOINT_DOMAIN: 'devtool.test' };
  const noCluster = runDevtool(['deploy', '--name', 'cheap', '--namespace', s.namespace], { cwd: dir, env, timeoutMs: 60_000 });
  assert.equal(noCluster.code, 1, noCluster.stderr);
  assert.match(lines(noCluster.stderr).at(-1)!, /^Error: .*127\.0\.0\.1:1/);
  assert.doesNotMatch(noCluster.stderr, /build|Docker daemon/i);
});
