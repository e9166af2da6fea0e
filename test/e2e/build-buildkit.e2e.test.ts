/**
 * `devtool build` on a BuildKit daemon, end to end: the built CLI with BUILDKIT_HOST
 * (HOST:PORT, devtool's documented form) or a context's `tcp://` builder, the local buildkitd
 * (buildkit/buildkitd.sh) and the local cluster's registry. The backend's own details (secrets,
 * cache, keepalive on the wire, interruption) are in src/image/buildkit.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuildkit } from '../../buildkit/test-buildkit.ts';
import { crane, ensureCluster } from '../../cluster/test-cluster.ts';
import { createSandbox, lines, repoRoot, runDevtool, type Sandbox } from './cli.ts';

const fixture = join(repoRoot, 'src', 'image', 'testdata', 'buildkit-app');
const runId = Date.now().toString(36);
let sandbox: Sandbox;
let work: string;
let app: string;
let address: string;

before(async () => {
  const cluster = await ensureCluster();
  address = await ensureBuildkit();
  sandbox = createSandbox(readFileSync(cluster.kubeconfigPath, 'utf8'));
  work = mkdtempSync(join(tmpdir(), 'devtool-build-buildkit-'));
  app = join(work, `bkapp-${runId}`);
  cpSync(fixture, app, { recursive: true });
  writeFileSync(join(app, 'token.txt'), `token ${runId}`);
  writeFileSync(
    join(app, 'devtool.yml'),
    ['build:', '  app:', '    target: base', '    args:', `      GREETING: from the manifest ${runId}`, '    secrets:', '      token: token.txt', ''].join(
      '\n',
    ),
  );
  const use = devtool(['context', 'use', 'devtool-local', '--registry', 'localhost:5000']);
  assert.equal(use.code, 0, use.stderr);
});
after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function devtool(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000) {
  return runDevtool(args, { cwd: app, timeoutMs, env: { ...sandbox.env, ...env } });
}

function lastLine(text: string): string {
  return lines(text).at(-1) ?? '';
}

/** One file of the image's flattened filesystem. */
function fileInImage(ref: string, path: string): string {
  const tar = join(work, `${basename(ref).replace(/[^a-z0-9]/gi, '_')}.tar`);
  crane(['--insecure', 'export', ref, tar]);
  const r = spawnSync('tar', ['-xOf', tar, path], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${path} in ${ref}: ${r.stderr}`);
  return r.stdout;
}

test('BUILDKIT_HOST=HOST:PORT: `devtool build` builds on that daemon and pushes', { timeout: 300_000 }, () => {
  const r = devtool(['build'], { BUILDKIT_HOST: address.replace('tcp://', '') });
  assert.equal(r.code, 0, r.stderr);
  const [ref, ...rest] = lines(r.stdout);
  assert.deepEqual(rest, []);
  assert.match(ref ?? '', new RegExp(`^localhost:5000/bkapp-${runId}-app:devtool-[0-9a-f]{24}$`));
  assert.match(r.stderr, new RegExp(`building image app with buildkit \\(${address.replace(/[.]/g, '\\.')}\\)`));
  assert.match(r.stderr, /#\d+ \[base 2\/5\] COPY app\/ \/app\//, 'BuildKit progress reaches the user');
  assert.equal(fileInImage(ref!, 'app/built.txt'), `greeting=from the manifest ${runId}\n`);
});

test('a failing RUN: one line naming the image, the step, its Dockerfile line and exit code', { timeout: 300_000 }, () => {
  // -f builds the last stage, `broken`.
  const r = devtool(['build', '-f', 'Dockerfile', '--secret', 'id=token,src=token.txt'], { BUILDKIT_HOST: address });
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    lastLine(r.stderr),
    /^Error: .*localhost:5000\/bkapp-[0-9a-z]+:devtool-[0-9a-f]{24}.*\[broken 1\/1\] RUN echo "about to fail" && exit 7 \(Dockerfile:13\): .*exit code: 7$/,
  );
  assert.match(r.stderr, /#\d+ [0-9.]+ about to fail/, 'the step output is shown');
  assert.equal(r.stdout, '');
});

test('malformed keepalive settings and an unreachable BUILDKIT_HOST are one-line errors', { timeout: 120_000 }, () => {
  const ka = devtool(['build'], { BUILDKIT_HOST: address, DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: 'soon' });
  assert.equal(ka.code, 1, ka.stderr);
  assert.equal(lastLine(ka.stderr), 'Error: invalid DEVTOOL_KEEPALIVE_CLIENT_TIME_MS "soon": expected a whole number of milliseconds');

  const bad = devtool(['build'], { BUILDKIT_HOST: 'localhost' });
  assert.equal(bad.code, 1, bad.stderr);
  assert.match(lastLine(bad.stderr), /^Error: invalid BUILDKIT_HOST "localhost": no port; expected HOST:PORT/);

  const started = Date.now();
  const down = devtool(['build'], { BUILDKIT_HOST: '127.0.0.1:1' });
  assert.equal(down.code, 1, down.stderr);
  assert.match(
    lastLine(down.stderr),
    /^Error: .*cannot reach the BuildKit daemon at tcp:\/\/127\.0\.0\.1:1: dial tcp 127\.0\.0\.1:1: connect: connection refused$/,
  );
  assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
});

test('a context whose builder is tcp://HOST:PORT builds there; BUILDKIT_HOST still wins', { timeout: 300_000 }, () => {
  const use = devtool(['context', 'use', 'devtool-local', '--builder', address]);
  assert.equal(use.code, 0, use.stderr);
  const overridden = devtool(['build'], { BUILDKIT_HOST: '127.0.0.1:1' });
  assert.equal(overridden.code, 1, overridden.stderr);
  assert.match(lastLine(overridden.stderr), /cannot reach the BuildKit daemon at tcp:\/\/127\.0\.0\.1:1/);

  const r = devtool(['build']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`building image app with buildkit \\(${address.replace(/[.]/g, '\\.')}\\)`));
  assert.match(lines(r.stdout)[0] ?? '', /^localhost:5000\/bkapp-[0-9a-z]+-app:devtool-[0-9a-f]{24}$/);
});
