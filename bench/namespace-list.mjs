// `devtool namespace list` on a service context, next to `kubectl get namespaces` measured in the
// same run. The service is the built program (dist/devtool-service.cjs `serve`) started here on
// loopback against the local cluster, a user made with its `create-user`, logged in with
// `context use <url> --token`. A third figure, `kubectl get pods` through the kubeconfig that
// `devtool kubeconfig` wrote, is kubectl with the user's own credentials (the devtool kubetoken
// plugin, its token cached); `devtool version` is the CLI's start-up floor. The commands alternate run by run, so background load hits them
// alike. Writes bench/results/namespace-list.json (bench/results.mjs); progress on stderr.
//
//   node bench/namespace-list.mjs [--runs N]
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, writeResult } from './results.mjs';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg !== -1 ? Number(process.argv[runsArg + 1]) : 20;
const WARMUP = 3;
const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist', 'devtool.cjs');
const serviceProgram = join(root, 'dist', 'devtool-service.cjs');

function must(r, what) {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

if (!existsSync(cli) || !existsSync(serviceProgram)) must(spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' }), 'build');
const admin = must(spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'up'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }), 'cluster.sh up')
  .trim()
  .split('\n')
  .pop();
// kubectl's HOME is a temporary folder: its discovery cache (~/.kube/cache) stays out of the real home and the clone.
const tmp = mkdtempSync(join(tmpdir(), 'devtool-bench-ns-'));
const binDir = '/var/cache/devtool-cluster/bin';
const kubectlBin = join(
  binDir,
  readdirSync(binDir).find((d) => d.startsWith('k8s-') && existsSync(join(binDir, d, 'kubectl'))),
  'kubectl',
);
const kubectl = (args, kubeconfig = admin) =>
  must(spawnSync(kubectlBin, args, { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: tmp, KUBECONFIG: kubeconfig } }), `kubectl ${args.join(' ')}`);

const run = randomBytes(3).toString('hex');
const serviceNs = `bench-ns-${run}`;
const user = `bench${run}`;
const caFile = join(tmp, 'ca.crt');
const server = kubectl(['config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']);
const caData = kubectl(['config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}']);
writeFileSync(caFile, Buffer.from(caData, 'base64'));
kubectl(['create', 'namespace', serviceNs]);
kubectl(['label', 'namespace', serviceNs, 'devtool.dev/e2e=true']);

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const serviceEnv = {
  ...process.env,
  KUBECONFIG: admin,
  POD_NAMESPACE: serviceNs,
  HOST: '127.0.0.1',
  PORT: String(port),
  LOG_LEVEL: 'warn',
  DEVTOOL_OBJECT_LABELS: 'devtool.dev/e2e=true',
  DEVTOOL_KUBE_SERVER: server,
  DEVTOOL_KUBE_CA_FILE: caFile,
};
const service = spawn(process.execPath, [serviceProgram, 'serve'], { env: serviceEnv, stdio: 'ignore' });
const url = `http://127.0.0.1:${port}`;

const home = join(tmp, 'home');
const env = { PATH: process.env.PATH, HOME: home, DEVTOOL_HOME: join(home, '.devtool'), KUBECONFIG: join(tmp, 'kubeconfig'), DEVTOOL_DISABLE_ANALYTICS: '1' };

function once(bin, args, childEnv) {
  const start = process.hrtime.bigint();
  const r = spawnSync(bin, args, { env: childEnv, cwd: tmp, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p95 = (v) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.ceil(v.length * 0.95) - 1)];
const round = (n) => Math.round(n * 10) / 10;

try {
  for (let i = 0; ; i++) {
    if (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      break;
    if (i > 100) throw new Error('the service did not get ready in 10 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const token = must(spawnSync(process.execPath, [serviceProgram, 'create-user', user], { env: serviceEnv, encoding: 'utf8' }), 'create-user')
    .trim()
    .split('\n')
    .pop();
  must(spawnSync(process.execPath, [cli, 'context', 'use', url, '--token', token], { env, encoding: 'utf8' }), 'context use');
  must(spawnSync(process.execPath, [cli, 'kubeconfig'], { env, encoding: 'utf8' }), 'kubeconfig');

  const cases = {
    devtoolNamespaceList: () => once(process.execPath, [cli, 'namespace', 'list'], env),
    // The floor of any devtool command on this machine now: start-up alone, no request.
    devtoolVersion: () => once(process.execPath, [cli, 'version'], env),
    kubectlGetNamespaces: () => once(kubectlBin, ['get', 'namespaces'], { PATH: process.env.PATH, HOME: tmp, KUBECONFIG: admin }),
    kubectlGetPodsUserPlugin: () => once(kubectlBin, ['get', 'pods'], { PATH: process.env.PATH, HOME: home, KUBECONFIG: env.KUBECONFIG }),
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const [name, f] of Object.entries(cases)) {
      const ms = f();
      if (i >= WARMUP) times[name].push(ms);
    }
    process.stderr.write(`.${i + 1 === WARMUP + RUNS ? '\n' : ''}`);
  }
  const figures = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, { medianMs: round(median(v)), p95Ms: round(p95(v)) }]));
  writeResult({
    bench: 'namespace-list',
    figures: {
      devtoolNamespaceListMedian: figure(figures.devtoolNamespaceList.medianMs, 'ms'),
      toKubectl: figure(round(figures.devtoolNamespaceList.medianMs / figures.kubectlGetNamespaces.medianMs), 'x'),
      devtoolVersionMedian: figure(figures.devtoolVersion.medianMs, 'ms'),
      kubectlGetPodsUserPluginMedian: figure(figures.kubectlGetPodsUserPlugin.medianMs, 'ms'),
    },
    baseline: { kubectlGetNamespacesMedian: figure(figures.kubectlGetNamespaces.medianMs, 'ms') },
    details: {
      runs: RUNS,
      ...figures,
      note:
        'kubectlGetNamespaces: the cluster admin kubeconfig (a user may not list all namespaces); ' +
        'kubectlGetPodsUserPlugin: the user kubeconfig from devtool kubeconfig',
    },
  });
} finally {
  service.kill('SIGTERM');
  spawnSync(kubectlBin, ['delete', 'namespace', serviceNs, `${user}-devtool`, '--wait=false'], {
    env: { PATH: process.env.PATH, HOME: tmp, KUBECONFIG: admin },
  });
  rmSync(tmp, { recursive: true, force: true });
}
