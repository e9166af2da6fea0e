// A `devtool deploy` with nothing changed (the image's content tag is already in the registry, so
// the build is skipped), next to the baseline measured in the same run: the manifest's deploy
// command run directly by a shell with the image reference already known (what a user who built
// and pushed by hand would run). The difference is devtool's own cost: hashing the build context,
// one registry lookup, the environment's state records and the labelling proxy. A third series,
// the same deploy from a manifest without a build section (the image reference written in the
// command), isolates the cost of the build skip itself from the rest of devtool's deploy.
// Uses the sample application of the build tests, on the local cluster and Docker daemon; the
// first deploy (which builds) is not timed. Rounds alternate so machine load affects both sides.
// Writes bench/results/deploy-nochange.json (bench/results.mjs).
//   node bench/deploy-nochange.mjs [--rounds N]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, writeResult } from './results.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const rounds = arg('--rounds', 5);
const root = new URL('..', import.meta.url).pathname;

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

const kubeconfig = lastLine(run('bash', [join(root, 'cluster/cluster.sh'), 'up'], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout);
const dockerHost = lastLine(run('bash', [join(root, 'cluster/dockerd.sh'), 'up'], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout);
run(process.execPath, [join(root, 'scripts/build.mjs')]);

const work = mkdtempSync(join(tmpdir(), 'bench-nochange-'));
// A private copy of the bundle (with the project's node_modules beside it), so that a rebuild of
// dist/ by someone else during the run cannot break it.
cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true });
symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
const app = join(work, 'bench-app');
cpSync(join(root, 'test/e2e/fixtures/build-app'), app, { recursive: true });
writeFileSync(join(app, 'run-id'), `${Date.now().toString(36)}\n`);
const env = {
  ...process.env,
  KUBECONFIG: kubeconfig,
  DOCKER_HOST: dockerHost,
  DEVTOOL_HOME: join(work, 'home'),
  DEVTOOL_DISABLE_ANALYTICS: '1',
  GREETING: 'bench',
};
const devtool = (args) => run(process.execPath, [join(work, 'dist/devtool.cjs'), ...args], { cwd: app, env });
const namespace = `bench-nochange-${Date.now().toString(36)}`;
run('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', namespace], { env });

try {
  devtool(['context', 'use', 'devtool-local', '--registry', 'localhost:5000']);
  const first = devtool(['deploy', '--namespace', namespace]);
  const image = /building image app with docker: (\S+)/.exec(first.stderr)?.[1];
  if (!image) throw new Error(`the first deploy did not build:\n${first.stderr}`);
  // The manifest's deploy command, as its shell runs it, with the variable devtool would export.
  const command = 'sed "s|IMAGE|$DEVTOOL_BUILD_APP_IMAGE|" k8s/app.yaml | kubectl apply -f -';
  // Its kubeconfig points at the namespace (set once, not timed), as devtool's temporary one does.
  const baselineKubeconfig = join(work, 'kubeconfig');
  cpSync(kubeconfig, baselineKubeconfig);
  run('kubectl', ['--kubeconfig', baselineKubeconfig, 'config', 'set-context', '--current', `--namespace=${namespace}`], { env });
  const baselineEnv = { ...env, DEVTOOL_BUILD_APP_IMAGE: image, KUBECONFIG: baselineKubeconfig };

  // Outside the application folder, so that it is not part of the build context.
  const noBuild = join(work, 'no-build.yml');
  writeFileSync(noBuild, `deploy:\n  - name: apply\n    command: cd ${app} && ${command.replace('$DEVTOOL_BUILD_APP_IMAGE', image)}\n`);

  const results = { devtool: [], devtoolWithoutBuildSection: [], baseline: [] };
  const sides = ['devtool', 'devtoolWithoutBuildSection', 'baseline'];
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      if (side === 'devtoolWithoutBuildSection') {
        const [ms] = timed(() => devtool(['deploy', '--namespace', namespace, '--file', noBuild, '--name', 'bench-app']));
        results.devtoolWithoutBuildSection.push(ms);
      } else if (side === 'devtool') {
        const [ms, r] = timed(() => devtool(['deploy', '--namespace', namespace]));
        if (!/build skipped/.test(r.stderr)) throw new Error(`a no-change deploy built:\n${r.stderr}`);
        results.devtool.push(ms);
      } else {
        const [ms] = timed(() => run('sh', ['-c', command], { cwd: app, env: baselineEnv }));
        results.baseline.push(ms);
      }
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const d = median(results.devtool);
  const n = median(results.devtoolWithoutBuildSection);
  const b = median(results.baseline);
  writeResult({
    bench: 'deploy-nochange',
    figures: {
      devtoolDeployMedian: figure(Math.round(d), 'ms'),
      devtoolWithoutBuildSectionMedian: figure(Math.round(n), 'ms'),
      buildSkip: figure(Math.round(d - n), 'ms'),
      overhead: figure(Math.round(d - b), 'ms'),
      toBaseline: figure(+(d / b).toFixed(2), 'x'),
    },
    baseline: { deployCommandDirectlyMedian: figure(Math.round(b), 'ms') },
    details: { rounds, image, runsMs: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.map(Math.round)])) },
  });
} finally {
  spawnSync(process.execPath, [join(work, 'dist/devtool.cjs'), 'destroy', '--namespace', namespace], { cwd: app, env, stdio: 'ignore' });
  spawnSync('kubectl', ['--kubeconfig', kubeconfig, 'delete', 'namespace', namespace, '--wait=false'], { env, stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
}
