// Login-to-ready time of `devtool context use <url> --token <token>` (a first login: a fresh devtool
// home each round; the CLI checks the token with GET /me and reads GET /info, then stores the
// context), next to two baselines measured in the same run: one authenticated request to the same
// service by curl (`GET /api/v1/me`: a process start and one HTTP round trip), and `kubectl get
// namespaces` on the local cluster. The service is the built program (`serve`) started on
// loopback against the local cluster, as the e2e tests run it. Rounds alternate the order of the
// three, so machine load affects all sides. Writes bench/results/context-login.json (bench/results.mjs).
//   node bench/context-login.mjs [--rounds N]
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, writeResult } from './results.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const rounds = arg('--rounds', 10);
const root = new URL('..', import.meta.url).pathname;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}
function timed(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}
const lastLine = (text) => text.trim().split('\n').pop();
const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

const kubeconfig = lastLine(run('bash', [join(root, 'cluster/cluster.sh'), 'up'], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout);
run(process.execPath, [join(root, 'scripts/build.mjs')]);

const work = mkdtempSync(join(tmpdir(), 'bench-login-'));
// A private copy of the bundles, so that a rebuild of dist/ by someone else cannot break the run.
cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true });
symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
const id = Date.now().toString(36);
const serviceNs = `bench-login-${id}`;
const user = `benchlogin${id}`;
const env = { ...process.env, KUBECONFIG: kubeconfig, DEVTOOL_DISABLE_ANALYTICS: '1' };
run('kubectl', ['create', 'namespace', serviceNs], { env });
const serviceEnv = { ...env, POD_NAMESPACE: serviceNs, HOST: '127.0.0.1', LOG_LEVEL: 'warn', DEVTOOL_OBJECT_LABELS: 'devtool.dev/bench=true' };
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const service = spawn(process.execPath, [join(work, 'dist/devtool-service.cjs'), 'serve'], { env: { ...serviceEnv, PORT: String(port) }, stdio: 'ignore' });

try {
  for (let i = 0; ; i++) {
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (i > 100 || service.exitCode !== null) throw new Error('devtool-service serve did not get ready in 10 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const token = lastLine(run(process.execPath, [join(work, 'dist/devtool-service.cjs'), 'create-user', user], { env: serviceEnv }).stdout);

  const sides = {
    devtoolContextUse: (round) => {
      const home = join(work, `home-${round}`);
      run(process.execPath, [join(work, 'dist/devtool.cjs'), 'context', 'use', url, '--token', token], {
        env: { ...env, HOME: home, DEVTOOL_HOME: join(home, '.devtool') },
      });
    },
    curlMe: () => run('curl', ['-sf', '-o', '/dev/null', '-H', `Authorization: Bearer ${token}`, `${url}/api/v1/me`], { env }),
    kubectlGetNamespaces: () => run('kubectl', ['get', 'namespaces'], { env }),
  };
  // One unmeasured round: caches (the bundle in the page cache, kubectl's discovery) warm for all.
  for (const fn of Object.values(sides)) fn('warm');
  const results = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  const names = Object.keys(sides);
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) results[name].push(timed(() => sides[name](round)));
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const medians = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(median(v))]));
  writeResult({
    bench: 'context-login',
    figures: {
      devtoolContextUseMedian: figure(medians.devtoolContextUse, 'ms'),
      toCurl: figure(+(medians.devtoolContextUse / medians.curlMe).toFixed(2), 'x'),
      toKubectl: figure(+(medians.devtoolContextUse / medians.kubectlGetNamespaces).toFixed(2), 'x'),
    },
    baseline: { curlMeMedian: figure(medians.curlMe, 'ms'), kubectlGetNamespacesMedian: figure(medians.kubectlGetNamespaces, 'ms') },
    details: { rounds, runsMs: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.map(Math.round)])) },
  });
} finally {
  service.kill('SIGTERM');
  spawnSync('kubectl', ['delete', 'namespace', serviceNs, `${user}-devtool`, '--wait=false', '--ignore-not-found'], { env, stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
}
