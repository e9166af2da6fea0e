// Start-up benchmark: median wall time of `devtool version` and `devtool --help` (the built CLI,
// dist/devtool.cjs) over 20 runs each, next to the median of `node -e 0` measured in the same run.
// The three commands are alternated run by run, so background load hits them all alike; a few
// warm-up rounds fill the OS file cache first. Writes bench/results/startup.json (bench/results.mjs).
// Target: `devtool version` within 1.5x of `node -e 0`.
//
//   node bench/startup.mjs [--runs N] [--cli path/to/devtool.cjs]   (--cli: compare another build)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, writeResult } from './results.mjs';

const TARGET = 1.5;
const WARMUP = 3;
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg !== -1 ? Number(process.argv[runsArg + 1]) : 20;

const root = fileURLToPath(new URL('..', import.meta.url));
const cliArg = process.argv.indexOf('--cli');
const cli = cliArg !== -1 ? resolve(process.argv[cliArg + 1]) : join(root, 'dist', 'devtool.cjs');
if (!existsSync(cli)) {
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(1);
}

// A temporary home: the CLI writes its log and analytics there, never in the real home.
const home = mkdtempSync(join(tmpdir(), 'devtool-bench-'));
const env = {
  PATH: process.env.PATH,
  HOME: home,
  DEVTOOL_HOME: join(home, '.devtool'),
  KUBECONFIG: join(home, 'kubeconfig-none'),
};

const cases = {
  node: ['-e', '0'],
  version: [cli, 'version'],
  help: [cli, '--help'],
};

function once(args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const round = (x, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

try {
  for (let i = 0; i < WARMUP; i++) for (const args of Object.values(cases)) once(args);
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const names = Object.keys(cases);
  for (let i = 0; i < RUNS; i++) {
    // Rotate the order each round as well, so no command always runs right after another.
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length];
      times[name].push(once(cases[name]));
    }
  }
  const nodeMs = median(times.node);
  const versionMs = median(times.version);
  const helpMs = median(times.help);
  const ratio = versionMs / nodeMs;
  writeResult({
    bench: 'startup',
    figures: {
      versionMedian: figure(round(versionMs), 'ms'),
      helpMedian: figure(round(helpMs), 'ms'),
      versionToNode: figure(round(ratio, 2), 'x'),
      helpToNode: figure(round(helpMs / nodeMs, 2), 'x'),
    },
    baseline: { nodeE0Median: figure(round(nodeMs), 'ms') },
    targets: [{ figure: 'versionToNode', max: TARGET, text: '`devtool version` within 1.5x of `node -e 0`' }],
    details: { runs: RUNS, warmupRuns: WARMUP, cli: cli === join(root, 'dist', 'devtool.cjs') ? 'dist/devtool.cjs' : cli },
  });
} finally {
  rmSync(home, { recursive: true, force: true });
}
