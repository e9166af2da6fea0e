/**
 * The BuildKit backend against a real buildkitd (buildkit/buildkitd.sh) pushing to the local
 * cluster's registry: what reaches the daemon (build args, secrets, target, labels, .dockerignore,
 * cache export and import, keepalive), what comes back (progress, digest, one-line errors), and
 * failures (a failing step, an unreachable or silent daemon, an interrupted build).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ensureBuildkit } from '../../buildkit/test-buildkit.ts';
import { crane, ensureCluster, REGISTRY } from '../../cluster/test-cluster.ts';
import { DevtoolError } from '../base/errors.ts';
import type { BuildRequest } from './backend.ts';
import { BuildkitBackend } from './buildkit.ts';

const app = join(dirname(fileURLToPath(import.meta.url)), 'testdata', 'buildkit-app');
const run = Date.now().toString(36);
const repo = `${REGISTRY}/devtool-e2e-buildkit`;
const work = mkdtempSync(join(tmpdir(), 'devtool-buildkit-e2e-'));
const secretFile = join(work, 'token');
const secret = `s3cr3t-${run}`;
let address = '';

before(async () => {
  await ensureCluster();
  address = await ensureBuildkit();
  writeFileSync(secretFile, secret);
});
after(() => rmSync(work, { recursive: true, force: true }));

function request(over: Partial<BuildRequest>): BuildRequest {
  return {
    contextDir: app,
    dockerfile: join(app, 'Dockerfile'),
    args: {},
    secrets: {},
    noCache: false,
    cacheFrom: [],
    exportCache: [],
    tags: [],
    labels: {},
    ...over,
  };
}

function collect(): { lines: string[]; line(text: string): void } {
  const lines: string[] = [];
  return { lines, line: (text) => lines.push(text) };
}

/** One file of an image's flattened filesystem, or undefined when absent. */
function fileInImage(ref: string, path: string): string | undefined {
  const tar = join(work, `${createHash('sha256').update(ref).digest('hex').slice(0, 12)}.tar`);
  crane(['--insecure', 'export', ref, tar]);
  const r = spawnSync('tar', ['-xOf', tar, path], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : undefined;
}

test('builds with args, a secret, a target, labels and .dockerignore; pushes every tag; exports its cache', async () => {
  const tags = [`${repo}:${run}-a`, `${repo}:${run}-b`];
  const cacheRef = `${repo}:cache-${run}`;
  const backend = new BuildkitBackend({ address, env: {} });
  const log = collect();
  const result = await backend.build(
    request({
      target: 'base',
      args: { GREETING: `hi ${run}` },
      secrets: { token: secretFile },
      tags,
      labels: { 'dev.devtool.e2e': run },
      exportCache: [cacheRef],
    }),
    log,
  );
  await backend.close();

  assert.match(result.digest ?? '', /^sha256:[0-9a-f]{64}$/);
  for (const tag of tags) assert.equal(crane(['--insecure', 'digest', tag]).trim(), result.digest, tag);
  const config = JSON.parse(crane(['--insecure', 'config', tags[0]!])) as { config: { Labels?: Record<string, string> } };
  assert.equal(config.config.Labels?.['dev.devtool.e2e'], run);

  // The greeting differs per run, so the steps after it run anew (a secret's content is not part of
  // BuildKit's cache key).
  assert.equal(fileInImage(tags[0]!, 'app/built.txt'), `greeting=hi ${run}\n`);
  assert.equal(fileInImage(tags[0]!, 'app/hello.txt'), 'hello from the context\n');
  assert.equal(fileInImage(tags[0]!, 'app/secret.sha256')?.trim(), createHash('sha256').update(secret).digest('hex'));
  assert.equal(fileInImage(tags[0]!, 'run/secrets/token'), undefined, 'the secret is not left in the image');
  assert.equal(fileInImage(tags[0]!, 'app/ignored.txt'), undefined, '.dockerignore');

  // Progress: BuildKit's plain lines, steps named as in the Dockerfile; the broken stage not built.
  assert.ok(
    log.lines.some((l) => /^#\d+ \[base 2\/5\] COPY app\/ \/app\/$/.test(l)),
    log.lines.join('\n'),
  );
  assert.ok(!log.lines.some((l) => l.includes('about to fail')));
  assert.ok(!log.lines.some((l) => l.includes(secret)), 'the secret never appears in the log');

  // The daemon answers for its registry: the pushed tag is there, another is not, a registry it
  // cannot reach is unknown, with the cause.
  assert.deepEqual(await backend.lookup(tags[0]!), { state: 'present' });
  assert.deepEqual(await backend.lookup(`${repo}:${run}-never-pushed`), { state: 'absent' });
  const nowhere = await backend.lookup(`127.0.0.1:1/devtool-e2e-buildkit:${run}`);
  assert.equal(nowhere.state, 'unknown');
  assert.match(nowhere.state === 'unknown' ? nowhere.reason : '', /^buildkit \(tcp:\/\/\S+\): .*127\.0\.0\.1:1/);

  // The registry cache (mode=max) is there, and a build importing it says so.
  const cacheManifest = JSON.parse(crane(['--insecure', 'manifest', cacheRef])) as { config?: { mediaType?: string }; manifests?: unknown[] };
  assert.ok(cacheManifest.config?.mediaType === 'application/vnd.buildkit.cacheconfig.v0' || cacheManifest.manifests, JSON.stringify(cacheManifest));
  const log2 = collect();
  const again = await new BuildkitBackend({ address, env: {} }).build(
    request({
      target: 'base',
      args: { GREETING: `hi ${run}` },
      secrets: { token: secretFile },
      tags: [`${repo}:${run}-c`],
      labels: { 'dev.devtool.e2e': run },
      cacheFrom: [cacheRef],
    }),
    log2,
  );
  assert.equal(again.digest, result.digest, 'same inputs, same image');
  assert.ok(
    log2.lines.some((l) => l.includes(`importing cache manifest from ${cacheRef}`)),
    log2.lines.join('\n'),
  );
});

test('a failing step is a one-line error naming the image, the step, its Dockerfile line and exit code', async () => {
  const tag = `${repo}:${run}-broken`;
  const log = collect();
  await assert.rejects(
    new BuildkitBackend({ address, env: {} }).build(request({ target: 'broken', secrets: { token: secretFile }, tags: [tag] }), log),
    (err: Error) => {
      assert.ok(err instanceof DevtoolError);
      assert.equal(
        err.message,
        `building ${tag} failed: [broken 1/1] RUN echo "about to fail" && exit 7 (Dockerfile:13): process "/bin/sh -c echo \\"about to fail\\" && ` +
          `exit 7" did not complete successfully: exit code: 7`,
      );
      return true;
    },
  );
  assert.ok(
    log.lines.some((l) => /^#\d+ [0-9.]+ about to fail$/.test(l)),
    'the step output is in the log',
  );
  assert.equal(pushed(tag), false, 'nothing pushed');
});

test('no daemon at the address: fails at once, naming the address', async () => {
  const port = await freePort();
  const started = Date.now();
  await assert.rejects(new BuildkitBackend({ address: `tcp://127.0.0.1:${port}`, env: {} }).build(request({ tags: [`${repo}:${run}-x`] }), collect()), {
    name: 'DevtoolError',
    message:
      `building ${repo}:${run}-x failed: cannot reach the BuildKit daemon at tcp://127.0.0.1:${port}: dial tcp 127.0.0.1:${port}: connect: ` +
      `connection refused`,
  });
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
});

test('a daemon that accepts but never answers: fails after the 10 s dial timeout', async () => {
  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s));
  const port = await listen(silent);
  const started = Date.now();
  try {
    await assert.rejects(new BuildkitBackend({ address: `tcp://127.0.0.1:${port}`, env: {} }).build(request({ tags: [`${repo}:${run}-x`] }), collect()), {
      message: `building ${repo}:${run}-x failed: cannot reach the BuildKit daemon at tcp://127.0.0.1:${port}: no answer within 10s`,
    });
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
  const took = Date.now() - started;
  assert.ok(took >= 9000 && took < 15000, `took ${took} ms`);
});

test('malformed keepalive settings fail before anything runs', () => {
  assert.throws(() => new BuildkitBackend({ address, env: { DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS: '20s' } }), {
    message: 'invalid DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS "20s": expected a whole number of milliseconds above 0',
  });
});

// During a build the daemon checks its session every 5 s, so a healthy connection is never idle
// long enough for a keepalive ping; keepalive is what notices a connection gone silent (a dead
// network path, a frozen daemon). A proxy that stops forwarding mid-build stands for that.
test('keepalive: with DEVTOOL_KEEPALIVE_CLIENT_TIME_MS a silent connection fails after time (raised to 10 s) + timeout; without, the build waits', async () => {
  const slow = (id: string) => request({ dockerfile: join(app, 'Dockerfile.slow'), args: { RUN_ID: `${run}-${id}` }, tags: [`${repo}:${run}-${id}`] });
  const freezeWhenRunning = (proxy: FreezingProxy, id: string) => ({
    line(text: string) {
      if (text.includes(`run ${run}-${id}`)) proxy.freeze();
    },
  });

  const withKeepalive = await freezingProxy(address);
  try {
    const env = { DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: '1', DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS: '2000' };
    await assert.rejects(
      new BuildkitBackend({ address: withKeepalive.address, env }).build(slow('ka'), freezeWhenRunning(withKeepalive, 'ka')),
      (err: Error) => {
        assert.match(err.message, new RegExp(`^building ${repo}:${run}-ka failed: .*keepalive`));
        return true;
      },
    );
    const silentFor = Date.now() - withKeepalive.frozenAt();
    // 1 ms is raised to 10 s of silence, then 2 s without the ping's answer.
    // (Not less than 10 s: the 1 ms asked for would have failed it within 2 s; the upper bound
    // leaves room for a loaded machine, and the control below waits longer.)
    assert.ok(silentFor >= 10000 && silentFor < 20000, `failed after ${silentFor} ms of silence`);
  } finally {
    await withKeepalive.close();
  }

  const without = await freezingProxy(address);
  const controller = new AbortController();
  try {
    const build = new BuildkitBackend({ address: without.address, env: {} }).build(slow('noka'), freezeWhenRunning(without, 'noka'), controller.signal);
    const outcome = await Promise.race([
      build.then(
        () => 'done',
        (e: Error) => e.message,
      ),
      new Promise((r) => setTimeout(r, 22000, 'waiting')),
    ]);
    assert.equal(outcome, 'waiting', 'no keepalive: still waiting after 22 s');
    assert.ok(without.frozenAt() > 0 && Date.now() - without.frozenAt() > 20000, 'silent for longer than the keepalive case took at most');
    controller.abort();
    await assert.rejects(build, { message: `building ${repo}:${run}-noka was interrupted` });
  } finally {
    await without.close();
  }
});

test('an interrupted build stops at once and pushes nothing', async () => {
  const tag = `${repo}:${run}-interrupted`;
  const controller = new AbortController();
  const log = {
    line(text: string) {
      if (text.includes(`run ${run}-interrupted`)) controller.abort();
    },
  };
  const started = Date.now();
  await assert.rejects(
    new BuildkitBackend({ address, env: {} }).build(
      request({ dockerfile: join(app, 'Dockerfile.slow'), args: { RUN_ID: `${run}-interrupted` }, tags: [tag] }),
      log,
      controller.signal,
    ),
    { message: `building ${tag} was interrupted` },
  );
  assert.ok(controller.signal.aborted, 'the step started');
  assert.ok(Date.now() - started < 12000, `took ${Date.now() - started} ms`);
  assert.equal(pushed(tag), false, 'nothing pushed');
});

test('build steps reach the Debian mirror (apt-get install)', async () => {
  const tag = `${repo}:${run}-apt`;
  await new BuildkitBackend({ address, env: {} }).build(request({ dockerfile: join(app, 'Dockerfile.apt'), args: { RUN_ID: run }, tags: [tag] }), collect());
  assert.equal(fileInImage(tag, 'hello.txt'), 'Hello, world!\n');
});

function pushed(ref: string): boolean {
  try {
    crane(['--insecure', 'digest', ref]);
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const s = createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

interface FreezingProxy {
  readonly address: string;
  /** From now on nothing passes in either direction; the connections stay open. */
  freeze(): void;
  /** When freeze() was called (ms since the epoch), or 0. */
  frozenAt(): number;
  close(): Promise<void>;
}

/** A TCP proxy to the daemon that can go silent, like a network path that died. */
async function freezingProxy(target: string): Promise<FreezingProxy> {
  const url = new URL(target);
  let frozenAt = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(url.port), url.hostname);
    sockets.add(client).add(upstream);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      from.on('data', (chunk: Buffer) => {
        if (!frozenAt) to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => to.destroy());
    }
  });
  const port = await listen(server);
  return {
    address: `tcp://127.0.0.1:${port}`,
    freeze: () => {
      frozenAt ||= Date.now();
    },
    frozenAt: () => frozenAt,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
