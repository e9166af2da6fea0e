// What the dev-* benchmarks share: running a command, the local cluster, this tree's CLI bundle and
// agent image, and the environment their devtool runs with.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const root = new URL('..', import.meta.url).pathname;

/** Runs a command to its end; its stdout, or an error with its stderr. */
export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const lastLine = (s) => s.trim().split('\n').pop();
/** The p-th percentile (nearest rank) of xs. */
export const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** Starts the local cluster (or finds it running); its kubeconfig. */
export function clusterUp() {
  return lastLine(run('bash', [join(root, 'cluster/cluster.sh'), 'up'], { stdio: ['ignore', 'pipe', 'inherit'] }));
}

/** Builds dist/ (the CLI bundles) from this tree. */
export function buildCli() {
  run(process.execPath, [join(root, 'scripts/build.mjs')]);
}

/**
 * The agent image to measure: $DEVTOOL_BIN_IMAGE, else this tree's agent built and pushed to
 * `registry` (agent/build.sh; without one, $DEVTOOL_BIN_REGISTRY or localhost:5000). A repository
 * of your own (localhost:5000/NAME) keeps this tree's agent apart from others'.
 */
export function agentImage(registry) {
  if (process.env.DEVTOOL_BIN_IMAGE) return process.env.DEVTOOL_BIN_IMAGE;
  return lastLine(run('bash', [join(root, 'agent/build.sh'), 'all', ...(registry ? [registry] : [])], { stdio: ['ignore', 'pipe', 'inherit'] }));
}

/** The environment of the devtool a bench runs: its own home, no analytics, the agent image. */
export function devtoolEnv({ kubeconfig, home, image }) {
  return { ...process.env, KUBECONFIG: kubeconfig, DEVTOOL_HOME: home, DEVTOOL_DISABLE_ANALYTICS: '1', DEVTOOL_BIN_IMAGE: image };
}
