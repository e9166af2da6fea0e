// `devtool logs --tail 100` of a one-service environment, next to the baseline measured in the same
// run: `kubectl logs --tail 100` of the same pod by name, with the cluster's own kubectl
// (`cluster/cluster.sh kubectl-path`). devtool does more for the same lines: it finds the
// environment's pods by label, reads each started container's log, and prefixes each line; the
// difference is that cost and its start-up. A third series, `devtool endpoints` (the same start-up
// and Kubernetes client, one list request), is the floor of any devtool command that reads the
// cluster: what logs adds above it is its own work. The pod has printed 1,000 lines and is quiet.
// Runs alternate so machine load hits every side alike; each logs run is checked to print 100 lines.
// Writes bench/results/logs-tail.json (bench/results.mjs).
//   node bench/logs-tail.mjs [--runs N]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, writeResult } from './results.mjs';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg !== -1 ? Number(process.argv[runsArg + 1]) : 15;
const WARMUP = 2;
const root = fileURLToPath(new URL('..', import.meta.url));
const REGISTRY = 'localhost:5000';

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}
function timed(fn) {
  const start = process.hrtime.bigint();
  const out = fn();
  return [Number(process.hrtime.bigint() - start) / 1e6, out];
}
const lastLine = (text) => text.trim().split('\n').pop();
const lineCount = (text) => text.split('\n').filter(Boolean).length;

const kubeconfig = lastLine(run('bash', [join(root, 'cluster/cluster.sh'), 'up'], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout);
const kubectlBin = lastLine(run('bash', [join(root, 'cluster/cluster.sh'), 'kubectl-path']).stdout);
run(process.execPath, [join(root, 'scripts/build.mjs')]);

const work = mkdtempSync(join(tmpdir(), 'bench-logs-'));
// A private copy of the bundle (with the project's node_modules beside it): a rebuild of dist/ by
// someone else during the run cannot break it.
cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true });
symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
// kubectl's HOME is here too: its discovery cache stays out of the real home.
const env = { PATH: process.env.PATH, HOME: work, KUBECONFIG: kubeconfig, DEVTOOL_HOME: join(work, 'devtool-home'), DEVTOOL_DISABLE_ANALYTICS: '1' };
const app = join(work, 'logsbench');
mkdirSync(app);
writeFileSync(
  join(app, 'compose.yaml'),
  [
    'services:',
    '  printer:',
    `    image: ${REGISTRY}/debian:bookworm`,
    '    command: ["sh", "-c", "seq -f \'printer line %g of a log long enough to be cut by --tail\' 1000; sleep infinity"]',
    '',
  ].join('\n'),
);
const namespace = `bench-logs-${Date.now().toString(36)}`;
const kubectl = (args) => run(kubectlBin, args, { env });
const devtool = (args) => run(process.execPath, [join(work, 'dist/devtool.cjs'), ...args, '--namespace', namespace], { cwd: app, env });
kubectl(['create', 'namespace', namespace]);
kubectl(['label', 'namespace', namespace, 'devtool.dev/e2e=true']);

try {
  devtool(['deploy', '--wait', '--timeout', '3m']);
  const pod = kubectl(['get', 'pods', '-n', namespace, '-l', 'devtool.dev/service=printer', '-o', 'jsonpath={.items[0].metadata.name}']).stdout.trim();
  // Every line printed before timing starts.
  for (let i = 0; lineCount(kubectl(['logs', '-n', namespace, pod]).stdout) < 1000; i++) {
    if (i > 100) throw new Error(`pod ${pod} did not print its 1000 lines`);
    spawnSync('sleep', ['0.2']);
  }
  const sides = {
    devtool: () => devtool(['logs', '--tail', '100']),
    kubectl: () => kubectl(['logs', '-n', namespace, pod, '--tail', '100']),
    devtoolEndpoints: () => devtool(['endpoints']),
  };
  const results = { devtool: [], kubectl: [], devtoolEndpoints: [] };
  const order = Object.keys(sides);
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const side of i % 2 === 0 ? order : [...order].reverse()) {
      const [ms, r] = timed(sides[side]);
      if (side !== 'devtoolEndpoints' && lineCount(r.stdout) !== 100) throw new Error(`${side} printed ${lineCount(r.stdout)} lines, not 100:\n${r.stdout}`);
      if (i >= WARMUP) results[side].push(ms);
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const d = median(results.devtool);
  const k = median(results.kubectl);
  const e = median(results.devtoolEndpoints);
  writeResult({
    bench: 'logs-tail',
    figures: {
      devtoolLogsTailMedian: figure(Math.round(d), 'ms'),
      overhead: figure(Math.round(d - k), 'ms'),
      toBaseline: figure(+(d / k).toFixed(2), 'x'),
      devtoolEndpointsMedian: figure(Math.round(e), 'ms'),
      aboveEndpoints: figure(Math.round(d - e), 'ms'),
    },
    baseline: { kubectlLogsTailMedian: figure(Math.round(k), 'ms') },
    details: { runs: RUNS, warmup: WARMUP, lines: 100, runsMs: Object.fromEntries(Object.entries(results).map(([side, v]) => [side, v.map(Math.round)])) },
  });
} finally {
  spawnSync(kubectlBin, ['delete', 'namespace', namespace, '--wait=false'], { env, stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
}
