/**
 * `--context` on the local cluster: a kubeconfig whose current context points at a server that
 * does not answer, and the local cluster's context beside it. A command given
 * `--context devtool-local` acts on the local cluster for that one run; without the flag it goes
 * where the current context says, and the current context is left as it was.
 *
 * Beside them, servers that are not a working API server, each a context of a second kubeconfig:
 * one that accepts connections and never answers (a VPN that is down looks like this), one that
 * reads HTTP requests and never answers, and a web server that answers every path with a page.
 * Every command gives up on the first two at the connect or response timeout, in one line naming
 * the server and what to check, and says the third is not a Kubernetes API server.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { runDevtool, spawnDevtool } from './cli.ts';
import { clusterSandbox, deleteNamespace, REGISTRY, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let project: string;
/** The kubeconfig of the servers below, each a context; the current one is `silent`. */
let brokenKubeconfig: string;
/** Accepts TCP connections, never answers (not even the TLS handshake). */
let silent: string;
/** Reads HTTP requests, never answers. */
let mute: string;
/** Answers every path with 404 and an HTML page. */
let web: string;
const sockets: Socket[] = [];
const servers: { close(): unknown }[] = [];

before(async () => {
  s = await clusterSandbox('context-flag');
  // The current context: a cluster nobody listens on.
  const kc = parse(readFileSync(s.kubeconfig, 'utf8')) as { clusters: unknown[]; contexts: unknown[]; users: unknown[]; 'current-context': string };
  kc.clusters.push({ name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } });
  kc.users.push({ name: 'nobody', user: { token: 'x' } });
  kc.contexts.push({ name: 'nowhere', context: { cluster: 'nowhere', user: 'nobody' } });
  kc['current-context'] = 'nowhere';
  writeFileSync(s.kubeconfig, stringify(kc), { mode: 0o600 });
  project = join(s.root, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  writeFileSync(join(project, 'compose.yaml'), `services:\n  sleeper:\n    image: ${REGISTRY}/debian:bookworm\n    command: ["sleep", "infinity"]\n`);

  const blackHole = createNetServer((socket) => sockets.push(socket.on('error', () => undefined)));
  const reader = createHttpServer(() => undefined);
  reader.on('connection', (socket) => sockets.push(socket));
  const page = createHttpServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>Not Found</h1></body></html>\n'));
  silent = `https://127.0.0.1:${await listen(blackHole)}`;
  mute = `http://127.0.0.1:${await listen(reader)}`;
  web = `http://127.0.0.1:${await listen(page)}`;
  servers.push(blackHole, reader, page);
  // client-node speaks plain http only to a cluster marked insecure-skip-tls-verify.
  const cluster = (name: string, server: string) => ({ name, cluster: { server, 'insecure-skip-tls-verify': true } });
  const context = (name: string) => ({ name, context: { cluster: name, user: 'nobody', namespace: 'default' } });
  brokenKubeconfig = join(s.root, 'broken-kubeconfig.yaml');
  const broken = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [cluster('silent', silent), cluster('mute', mute), cluster('web', web)],
    users: [{ name: 'nobody', user: { token: 'x' } }],
    contexts: [context('silent'), context('mute'), context('web')],
    'current-context': 'silent',
  };
  writeFileSync(brokenKubeconfig, stringify(broken), { mode: 0o600 });
});

after(async () => {
  for (const socket of sockets) socket.destroy();
  for (const server of servers) server.close();
  await deleteNamespace(s);
});

async function listen(server: Server | ReturnType<typeof createNetServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * Runs devtool without blocking this process (the servers above answer from its event loop), with
 * the broken kubeconfig; killed after `limitMs`, which the old code, waiting forever, reached.
 */
async function runBroken(args: string[], env: NodeJS.ProcessEnv = {}, limitMs = 25_000) {
  const started = Date.now();
  const child = spawnDevtool(args, { env: { ...s.env, KUBECONFIG: brokenKubeconfig, ...env }, cwd: project });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  return { code, stdout, stderr, seconds: (Date.now() - started) / 1000, errors: stderr.split('\n').filter((l) => l.startsWith('Error: ')) };
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const devtool = (args: string[]) => runDevtool(args, { env: s.env, cwd: project });

test('--context picks the local cluster for one run; without it the current context is used', () => {
  const there = devtool(['down', '--context', 'devtool-local', '-n', s.namespace]);
  assert.equal(there.code, 0, there.stderr);
  assert.match(there.stderr, new RegExp(`no dev container api was active in namespace ${s.namespace}`));

  const current = devtool(['down', '-n', s.namespace]);
  assert.equal(current.code, 1, current.stderr);
  assert.match(current.stderr, /127\.0\.0\.1:1/);

  const shown = devtool(['context', 'show']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal((JSON.parse(shown.stdout) as { name: string }).name, 'nowhere', 'the current context is left as it was');
});

test('--context on endpoints, deploy, destroy and build: the named context for one run', () => {
  const ns = ['--context', 'devtool-local', '-n', s.namespace];
  const deployed = devtool(['deploy', '-f', 'compose.yaml', ...ns]);
  assert.equal(deployed.code, 0, deployed.stderr);
  assert.match(deployed.stderr, new RegExp(`deployed in namespace ${s.namespace}`));
  const listed = devtool(['endpoints', ...ns]);
  assert.equal(listed.code, 0, listed.stderr);
  const destroyed = devtool(['destroy', ...ns]);
  assert.equal(destroyed.code, 0, destroyed.stderr);
  // build selects it before anything is built: an unknown one is named.
  writeFileSync(join(project, 'Dockerfile'), 'FROM scratch\n');
  const built = devtool(['build', '-f', 'Dockerfile', '--context', 'no-such-context']);
  assert.equal(built.code, 2, built.stderr);
  assert.match(built.stderr, /^Error: --context: unknown context "no-such-context"/);
});

test('a server that accepts and never answers: every command gives up at the connect timeout, in one line naming it', async () => {
  const env = { DEVTOOL_CONNECT_TIMEOUT: '1s' };
  const line = new RegExp(
    `^Error: cannot reach the Kubernetes API server ${escaped(silent)} ` +
      '\\(no (TLS handshake|connection) within 1s; DEVTOOL_CONNECT_TIMEOUT sets the wait\\).*: ' +
      'check that the cluster is running, that the network to it \\(a VPN\\) is up, ' +
      'and that the server of the context in the kubeconfig \\(KUBECONFIG\\) is right$',
  );
  for (const args of [['endpoints'], ['down', 'api'], ['deploy', '-f', 'compose.yaml', '--wait'], ['destroy']]) {
    const r = await runBroken(args, env);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(r.seconds < 10, `${args.join(' ')} gave up in ${r.seconds}s`);
    assert.equal(r.errors.length, 1, r.stderr);
    assert.match(r.errors[0]!, line);
  }
  // doctor writes what it can, says why the rest is missing, and exits.
  const doctor = await runBroken(['doctor'], env);
  assert.equal(doctor.code, 0, doctor.stderr);
  assert.ok(doctor.seconds < 15, `doctor exited after ${doctor.seconds}s`);
  assert.match(
    doctor.stderr,
    new RegExp(`api: no remote logs from the cluster of context silent: cannot reach the Kubernetes API server ${escaped(silent)} \\(no `),
  );
  assert.ok(existsSync(doctor.stdout.trim()), doctor.stdout);
});

test('the timeouts have defaults, a slow wait is said, and a server that reads and never answers meets the response timeout', async () => {
  // No variable: 10 s for a connection, and the command says what it waits for meanwhile.
  const byDefault = await runBroken(['endpoints']);
  assert.equal(byDefault.code, 1, byDefault.stderr);
  assert.ok(byDefault.seconds >= 10 && byDefault.seconds < 20, `gave up after ${byDefault.seconds}s`);
  assert.match(
    byDefault.stderr,
    new RegExp(`^warn: waiting for the Kubernetes API server ${escaped(silent)} to accept the connection \\(up to 10s, DEVTOOL_CONNECT_TIMEOUT\\)$`, 'm'),
  );
  assert.match(byDefault.errors[0]!, /\(no TLS handshake within 10s; DEVTOOL_CONNECT_TIMEOUT sets the wait\)/);

  const answerless = await runBroken(['endpoints', '--context', 'mute'], { DEVTOOL_RESPONSE_TIMEOUT: '1s' });
  assert.equal(answerless.code, 1, answerless.stderr);
  assert.ok(answerless.seconds < 10, `gave up after ${answerless.seconds}s`);
  assert.match(
    answerless.errors[0]!,
    new RegExp(`^Error: cannot reach the Kubernetes API server ${escaped(mute)} \\(no answer within 1s; DEVTOOL_RESPONSE_TIMEOUT sets the wait\\)`),
  );

  const invalid = await runBroken(['endpoints'], { DEVTOOL_CONNECT_TIMEOUT: '10' });
  assert.equal(invalid.code, 2, invalid.stderr);
  assert.equal(invalid.stderr, 'Error: invalid DEVTOOL_CONNECT_TIMEOUT "10": expected a duration above zero, such as 10s or 1m\n');
});

test('a server that is not a Kubernetes API server is named as such, in one line', async () => {
  for (const args of [
    // down first: it took --context before endpoints did.
    ['down', 'api', '--context', 'web'],
    ['endpoints', '--context', 'web'],
  ]) {
    const r = await runBroken(args);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.errors.length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /HTTP-Code|Headers:/);
    assert.match(
      r.errors[0]!,
      new RegExp(
        `^Error: ${escaped(web)} is not a Kubernetes API server, or something in front of it refused: it answered 404 Not Found to GET /api\\S+: ` +
          'check the server of context web in the kubeconfig \\(KUBECONFIG\\)$',
      ),
    );
  }
});
