// `devtool pipeline deploy --wait` of a small manifest application (one kubectl command) next to
// the same `devtool deploy --wait` run here on a clone of the same repository, both as the same
// user on the same service context: the difference is the overhead of running remotely (the Job's
// pod starting, the clone, the runner's start-up, the status reaching the CLI). The service is the
// chart-installed one (`scripts/service-up.sh`; BENCH_SERVICE_RELEASE=<name> for a release of its
// own), the repository on the test git server (scripts/git-server.sh). The two alternate run by
// run, so background load hits them alike. Writes its result under bench/results/ as pipeline-deploy.json (bench/results.mjs);
// progress on stderr.
//
//   node bench/pipeline-deploy.mjs [--runs N]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, writeResult } from './results.mjs';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg !== -1 ? Number(process.argv[runsArg + 1]) : 3;
const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist', 'devtool.cjs');
const release = process.env.BENCH_SERVICE_RELEASE || 'devtool';
const caFile = join(process.env.DEVTOOL_FRONT_DOOR_STATE ?? '/var/lib/devtool-front-door', 'ca.crt');

function must(r, what) {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}
const lastLine = (text) => text.trim().split('\n').pop();
const script = (path, args, env = {}) =>
  lastLine(
    must(spawnSync('bash', [join(root, path), ...args], { encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] }), path),
  );

must(spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' }), 'build');
const url = script('scripts/service-up.sh', [], { DEVTOOL_SERVICE_RELEASE: release === 'devtool' ? '' : release });
script('scripts/git-server.sh', ['up']);
const run = randomBytes(3).toString('hex');
const user = `benchpl${run}`;
const token = script('scripts/service-user.sh', [user], { DEVTOOL_SERVICE_NAMESPACE: release });
const tmp = mkdtempSync(join(tmpdir(), 'devtool-bench-pipeline-'));
const app = join(tmp, 'app');
mkdirSync(app);
writeFileSync(join(app, 'devtool.yml'), 'deploy:\n  - kubectl create configmap bench --from-literal=a=b --dry-run=client -o yaml | kubectl apply -f -\n');
const repo = script('scripts/git-server.sh', ['repo', `bench-${run}`, app]);
const env = { PATH: process.env.PATH, HOME: tmp, DEVTOOL_HOME: join(tmp, 'devtool-home'), KUBECONFIG: join(tmp, 'kubeconfig'), NODE_EXTRA_CA_CERTS: caFile };
must(spawnSync(process.execPath, [cli, 'context', 'use', url, '--token', token], { env, encoding: 'utf8' }), 'context use');
const clone = join(tmp, 'clone');
must(spawnSync('git', ['clone', '-q', repo, clone], { encoding: 'utf8', env: { ...process.env, GIT_SSL_CAINFO: caFile } }), 'git clone');

const timed = (args, cwd) => {
  const start = process.hrtime.bigint();
  must(spawnSync(process.execPath, [cli, ...args], { env, cwd, encoding: 'utf8', timeout: 300_000 }), args.join(' '));
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const remote = [];
const local = [];
try {
  for (let i = 0; i < RUNS; i++) {
    remote.push(timed(['pipeline', 'deploy', '--repository', repo, '--name', 'bench-remote', '--wait'], tmp));
    local.push(timed(['deploy', '--name', 'bench-local', '--wait'], clone));
    process.stderr.write(`run ${i + 1}/${RUNS}: pipeline ${remote.at(-1).toFixed(0)} ms, local ${local.at(-1).toFixed(0)} ms\n`);
  }
} finally {
  spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', 'delete', 'namespace', `${user}-devtool`, '--wait=false'], { stdio: 'ignore' });
  spawnSync('bash', [join(root, 'cluster/cluster.sh'), 'kubectl', '-n', release, 'delete', 'serviceaccount', `user-${user}`], { stdio: 'ignore' });
  rmSync(tmp, { recursive: true, force: true });
}
writeResult({
  bench: 'pipeline-deploy',
  figures: {
    pipelineDeployWaitMedian: figure(Math.round(median(remote)), 'ms'),
    overhead: figure(Math.round(median(remote) - median(local)), 'ms'),
  },
  baseline: { localDeployWaitMedian: figure(Math.round(median(local)), 'ms') },
  details: { runs: RUNS, runsMs: { pipelineDeployWait: remote.map(Math.round), localDeployWait: local.map(Math.round) } },
});
