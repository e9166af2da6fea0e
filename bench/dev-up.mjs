// `devtool up` to ready, run after run, next to a baseline measured in the same runs: a plain
// Deployment of the same image created and awaited until its pod is ready (`kubectl rollout
// status`). Images are in the registry and on the node before the first measured run.
// Each run: `up` in a project of a few files, until it prints "Forwarding until interrupted"
// (dev pod ready, first sync done), then Ctrl-C, `down` (with --volumes when asked: each run then
// copies the tree into a new volume), and the original's pod ready again before the next run.
// Writes bench/results/dev-up.json (bench/results.mjs): every run's time, the median, the slowest,
// and where the slowest run's time went: the steps `up` logged in devtool.log, each with the time
// since the step before.
// With --copy-agent no devtool-bin image is named and the context has no registry: the agent is
// copied into each dev pod through the Kubernetes API (docs/agent-delivery.md); written to
// dev-up-copied.json, next to dev-up.json's image runs.
// Targets: every run under 10 s; under 2.5 s with the image cached.
//   node bench/dev-up.mjs [--runs 20] [--volumes | --copy-agent]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, writeResult } from './results.mjs';
import { agentImage, buildCli, clusterUp, devtoolEnv, pct, root, run } from './lib.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const runs = arg('--runs', 20);
const newVolumeEachRun = process.argv.includes('--volumes');
const copyAgent = process.argv.includes('--copy-agent');

const kubeconfig = clusterUp();
buildCli();
const agent = copyAgent ? undefined : agentImage(process.env.DEVTOOL_E2E_BIN_REGISTRY);
const dir = mkdtempSync(join(tmpdir(), 'bench-up-'));
const ns = `bench-up-${Date.now().toString(36)}`;
const home = join(dir, 'home');
const env = devtoolEnv({ kubeconfig, home, image: agent });
const kubectl = (args, opts = {}) => run('kubectl', ['--kubeconfig', kubeconfig, '-n', ns, ...args], { env, ...opts });
const project = join(dir, 'project');
mkdirSync(join(project, 'src'), { recursive: true });
writeFileSync(join(project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
for (let i = 0; i < 20; i++) writeFileSync(join(project, 'src', `f${i}.js`), `module.exports = ${i};\n`);
const devtool = (args) => run(process.execPath, [join(root, 'dist/devtool.cjs'), ...args, '-n', ns], { cwd: project, env });
const image = 'localhost:5000/node:20';
const log = join(home, 'devtool.log');
const logSize = () => {
  try {
    return statSync(log).size;
  } catch {
    return 0;
  }
};

/** Creates a Deployment and waits until its pod is ready; ms. */
function plainDeployment(name) {
  const t0 = performance.now();
  kubectl(['create', 'deployment', name, `--image=${image}`, '--', 'sleep', 'infinity']);
  kubectl(['rollout', 'status', `deployment/${name}`, '--timeout', '5m']);
  return performance.now() - t0;
}

/** One `up` until ready; the devtool.log lines it wrote meanwhile. */
function up() {
  const from = logSize();
  const start = performance.now();
  const spawnedAt = Date.now();
  const proc = spawn(process.execPath, [join(root, 'dist/devtool.cjs'), 'up', '-n', ns], { cwd: project, env });
  let out = '';
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (out += c));
  return new Promise((resolve, reject) => {
    const failed = (code) => reject(new Error(`up exited ${code}: ${out}`));
    proc.once('exit', failed);
    proc.stdout.on('data', () => {
      if (!out.includes('Forwarding until interrupted')) return;
      const readyMs = performance.now() - start;
      proc.off('exit', failed);
      proc.kill('SIGTERM');
      proc.once('exit', () => resolve({ readyMs, steps: stepsOf(readFileSync(log).subarray(from).toString('utf8'), spawnedAt) }));
    });
  });
}

/** `up`'s steps as devtool.log has them: [ms since the step before, the line]; the first since the process was spawned. */
function stepsOf(text, spawnedAt) {
  const lines = text.split('\n').filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
  const out = [];
  let last = spawnedAt;
  for (const l of lines) {
    const at = Date.parse(l.slice(0, 24));
    const what = l
      .slice(25)
      .replace(/^(DEBUG|INFO |WARN |ERROR) /, '')
      .slice(0, 140);
    out.push([at - last, what]);
    last = at;
    if (what.includes('is ready (pod')) break;
  }
  return out;
}

// Warm-up: the node pulls both images; the first `up` creates the volume.
run('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', ns]);
kubectl(['create', 'deployment', 'api', `--image=${image}`, '--', 'sleep', 'infinity']);
kubectl(['rollout', 'status', 'deployment/api', '--timeout', '5m']);
await up();
devtool(['down', ...(newVolumeEachRun ? ['--volumes'] : [])]);
kubectl(['rollout', 'status', 'deployment/api', '--timeout', '5m']);

const results = [];
for (let i = 0; i < runs; i++) {
  const plainMs = plainDeployment(`plain-${i}`);
  kubectl(['delete', 'deployment', `plain-${i}`, '--wait=false']);
  const r = await up();
  devtool(['down', ...(newVolumeEachRun ? ['--volumes'] : [])]);
  kubectl(['rollout', 'status', 'deployment/api', '--timeout', '5m']);
  results.push({ run: i + 1, readyMs: Math.round(r.readyMs), baselinePlainDeploymentMs: Math.round(plainMs), steps: r.steps });
  process.stderr.write(`run ${i + 1}: up ready in ${Math.round(r.readyMs)} ms (plain Deployment ${Math.round(plainMs)} ms)\n`);
}
run('kubectl', ['--kubeconfig', kubeconfig, 'delete', 'namespace', ns, '--wait=false']);

const ready = results.map((r) => r.readyMs);
const slowest = results.reduce((a, b) => (b.readyMs > a.readyMs ? b : a));
const plain = results.map((r) => r.baselinePlainDeploymentMs);
const steps = (r) => r?.steps.map(([ms, what]) => `+${ms} ms  ${what}`);
writeResult({
  bench: newVolumeEachRun ? 'dev-up-volumes' : copyAgent ? 'dev-up-copied' : 'dev-up',
  figures: {
    readyMedian: figure(pct(ready, 50), 'ms'),
    readySlowest: figure(Math.max(...ready), 'ms'),
    runsOver10s: figure(ready.filter((x) => x >= 10_000).length, 'count'),
  },
  baseline: { plainDeploymentMedian: figure(pct(plain, 50), 'ms'), plainDeploymentSlowest: figure(Math.max(...plain), 'ms') },
  targets: [
    { figure: 'readySlowest', max: 10_000, text: 'every `up` ready under 10 s' },
    ...(newVolumeEachRun ? [] : [{ figure: 'readyMedian', max: 2_500, text: '`up` ready under 2.5 s with the image cached' }]),
  ],
  details: {
    runs,
    newVolumeEachRun,
    copyAgent,
    readyMs: ready,
    slowest: { run: slowest.run, readyMs: slowest.readyMs, steps: steps(slowest) },
    medianRunSteps: steps(results.find((r) => r.readyMs === pct(ready, 50))),
  },
});
