// Deploying a 10-service Compose application with `devtool deploy --wait`, next to the baseline
// a kubectl user would run for the same objects in the same run: `kubectl apply --server-side` of
// `devtool deploy --dry-run`'s output, then `kubectl rollout status` of every Deployment.
// Each round uses fresh namespaces (created beforehand, not timed); rounds alternate so load on
// the machine affects both sides alike. Writes bench/results/compose-deploy.json (bench/results.mjs);
// target: devtool within 1.2x of kubectl.
//   node bench/compose-deploy.mjs [--rounds N] [--services N]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, writeResult } from './results.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const rounds = arg('--rounds', 3);
const services = arg('--services', 10);
const root = new URL('..', import.meta.url).pathname;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}
function timed(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const kubeconfig = run('bash', [join(root, 'cluster/cluster.sh'), 'up'], { stdio: ['ignore', 'pipe', 'inherit'] })
  .trim()
  .split('\n')
  .pop();
run(process.execPath, [join(root, 'scripts/build.mjs')]);
const dir = mkdtempSync(join(tmpdir(), 'bench-deploy-'));
const compose = ['services:'];
for (let i = 0; i < services; i++) compose.push(`  svc${i}:`, '    image: localhost:5000/nginx:1', '    ports: ["80"]');
writeFileSync(join(dir, 'compose.yaml'), `${compose.join('\n')}\n`);
const env = { ...process.env, KUBECONFIG: kubeconfig, DEVTOOL_HOME: join(dir, 'home'), DEVTOOL_DISABLE_ANALYTICS: '1' };
const kubectl = (args) => run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env });
const devtool = (args) => run(process.execPath, [join(root, 'dist/devtool.cjs'), ...args], { cwd: dir, env });

const results = { devtool: [], kubectl: [] };
const id = Date.now().toString(36);
for (let round = 0; round < rounds; round++) {
  for (const side of round % 2 === 0 ? ['devtool', 'kubectl'] : ['kubectl', 'devtool']) {
    const ns = `bench-${side}-${id}-${round}`;
    kubectl(['create', 'namespace', ns]);
    if (side === 'devtool') {
      results.devtool.push(timed(() => devtool(['deploy', '--name', 'bench', '--namespace', ns, '--wait', '--timeout', '5m'])));
    } else {
      const objects = join(dir, `objects-${round}.yaml`);
      writeFileSync(objects, devtool(['deploy', '--name', 'bench', '--namespace', ns, '--dry-run']));
      results.kubectl.push(
        timed(() => {
          kubectl(['apply', '--server-side', '-n', ns, '-f', objects]);
          for (let i = 0; i < services; i++) kubectl(['rollout', 'status', '-n', ns, `deployment/svc${i}`, '--timeout', '5m']);
        }),
      );
    }
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const d = median(results.devtool);
const k = median(results.kubectl);
writeResult({
  bench: 'compose-deploy',
  figures: { devtoolDeployWaitMedian: figure(Math.round(d), 'ms'), toKubectl: figure(+(d / k).toFixed(2), 'x') },
  baseline: { kubectlApplyRolloutMedian: figure(Math.round(k), 'ms') },
  targets: [{ figure: 'toKubectl', max: 1.2, text: '`devtool deploy --wait` within 1.2x of kubectl apply + rollout status' }],
  details: { services, rounds, runsMs: results },
});
