// Typing while the first sync settles (docs/sync-new-volume.md): N rounds,
// each a new volume filled by the bootstrap with F files, then, as soon as `up` says the tree is
// copied, E files edited and D deleted on this machine at random moments of the next 2 s (while
// the container's Syncthing settles the copy). Each round counts, once the sync has settled and
// converged: `.sync-conflict-` copies on either side, a settle that did not come within the
// deadline (stuck), and files whose content in the container is not this machine's (an edit that
// did not arrive, a deleted file that came back, a file the container has and this machine not).
//   node bench/dev-settle.mjs [--rounds 30] [--files 3000] [--edits 20] [--deletes 5] [--cli dist/devtool.cjs]
// The agent image: $DEVTOOL_BIN_IMAGE, else this tree's agent pushed to $DEVTOOL_BIN_REGISTRY (one
// of them is required: the shared localhost:5000/devtool-bin is not overwritten by accident).
// Namespace: <$BENCH_NS_PREFIX or bench>-settle-<time>, deleted at the end.
// Writes its result under bench/results/ as dev-settle.json (bench/results.mjs); each round's record on stderr.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { figure, writeResult } from './results.mjs';
import { agentImage, clusterUp, devtoolEnv, root, run, sleep } from './lib.mjs';

const argOf = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
};
const rounds = Number(argOf('--rounds', 30));
const files = Number(argOf('--files', 3000));
const edits = Number(argOf('--edits', 20));
const deletes = Number(argOf('--deletes', 5));
const cli = resolve(argOf('--cli', join(root, 'dist/devtool.cjs')));
const SETTLE_DEADLINE_MS = 120_000;
const CONVERGE_MS = 60_000;

const kubeconfig = clusterUp();
if (!process.env.DEVTOOL_BIN_IMAGE && !process.env.DEVTOOL_BIN_REGISTRY) {
  console.error("dev-settle: set DEVTOOL_BIN_IMAGE (an agent image) or DEVTOOL_BIN_REGISTRY (where to push this tree's agent, e.g. localhost:5000/mine)");
  process.exit(2);
}
const agent = agentImage(process.env.DEVTOOL_BIN_REGISTRY);
const dir = mkdtempSync(join(tmpdir(), 'bench-settle-'));
const ns = `${process.env.BENCH_NS_PREFIX || 'bench'}-settle-${Date.now().toString(36)}`;
const env = devtoolEnv({ kubeconfig, home: join(dir, 'home'), image: agent });
const kubectl = (args, opts = {}) => run('kubectl', ['--kubeconfig', kubeconfig, '-n', ns, ...args], { env, ...opts });
const project = join(dir, 'project');
const devtool = (args) => run(process.execPath, [cli, ...args, '-n', ns], { cwd: project, env });

/** A small seeded generator: the same rounds pick the same files and moments on every run. */
function random(seed) {
  let x = seed * 2654435761 + 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) % 1_000_000) / 1_000_000;
  };
}

/** The project as a new round starts: F files in folders of 100, nothing else. */
function writeProject(round) {
  rmSync(project, { recursive: true, force: true });
  for (let i = 0; i < files; i++) {
    const d = join(project, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${i}.txt`), `round ${round} file ${i}\n`);
  }
  writeFileSync(join(project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
}

/** Every file under `top` by relative path, with the MD5 of its content. */
function localTree(top) {
  const out = new Map();
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(relative(top, p), createHash('md5').update(readFileSync(p)).digest('hex'));
    }
  };
  walk(top);
  return out;
}

/** The same for /app in the dev container (Syncthing's own .stfolder and .stignore left out). */
function remoteTree(pod) {
  const out = new Map();
  const text = kubectl([
    'exec',
    pod,
    '--',
    'sh',
    '-c',
    'cd /app && find . -path ./.stfolder -prune -o -type f ! -path ./.stignore -print0 | xargs -0 -r md5sum',
  ]);
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{32}) {2}\.\/(.*)$/.exec(line);
    if (m) out.set(m[2], m[1]);
  }
  return out;
}

/** Paths whose content differs, or that only one side has. */
function differences(local, remote) {
  const diff = [];
  for (const [p, h] of local) if (remote.get(p) !== h) diff.push(p);
  for (const p of remote.keys()) if (!local.has(p)) diff.push(p);
  return diff;
}

function up() {
  const proc = spawn(process.execPath, [cli, 'up', '-n', ns], { cwd: project, env });
  let out = '';
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (out += c));
  return { proc, output: () => out };
}
async function until(cond, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (cond()) return true;
  return cond();
}
async function stop(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
}
async function volumesGone() {
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(200)) {
    const pvs = run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'pv', '-o', 'jsonpath={range .items[*]}{.spec.claimRef.namespace}{"\\n"}{end}']);
    if (!pvs.split('\n').includes(ns)) return;
  }
}

run('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', ns]);
kubectl(['create', 'deployment', 'api', '--image=localhost:5000/node:20', '--', 'sleep', 'infinity']);
kubectl(['rollout', 'status', 'deployment/api', '--timeout', '5m']);

const results = [];
let current;
for (const sig of ['SIGINT', 'SIGTERM'])
  process.once(sig, () => {
    current?.proc.kill('SIGTERM');
    spawnSync('kubectl', ['--kubeconfig', kubeconfig, 'delete', 'namespace', ns, '--wait=false']);
    process.exit(130);
  });
try {
  for (let round = 0; round < rounds; round++) {
    writeProject(round);
    const rnd = random(round + 1);
    const picks = new Set();
    while (picks.size < edits + deletes) picks.add(Math.floor(rnd() * files));
    const chosen = [...picks].map((i) => ({ path: join(`d${Math.floor(i / 100)}`, `f${i}.txt`), at: Math.floor(rnd() * 2000) }));
    const session = up();
    current = session;
    const r = { round, bootstrapped: false, settled: false, settleMs: null, conflictsLocal: [], conflictsContainer: [], wrongContent: [], error: null };
    try {
      await until(() => /into the new volume/.test(session.output()) || session.proc.exitCode !== null, 240_000);
      r.bootstrapped = /into the new volume/.test(session.output());
      // Not this round's subject (the cluster away, a volume left over): an error, not a stuck settle.
      if (!r.bootstrapped) throw new Error(`no copy into a new volume: ${session.output().slice(-300)}`);
      // The typing: edits and deletions at their moments of the 2 s after the copy.
      const t0 = Date.now();
      await Promise.all(
        chosen.map(async (c, k) => {
          await sleep(c.at);
          if (k < edits) writeFileSync(join(project, c.path), `edited in round ${round} at +${Date.now() - t0} ms\n`);
          else unlinkSync(join(project, c.path));
        }),
      );
      r.settled = await until(() => /first sync settled in/.test(session.output()), SETTLE_DEADLINE_MS);
      r.settleMs = Number(/first sync settled in ([\d.]+)s/.exec(session.output())?.[1] ?? NaN) * 1000 || null;
      const pod = kubectl(['get', 'pods', '-l', 'devtool.dev/dev-pod=api', '-o', 'jsonpath={.items[0].metadata.name}']);
      // Converged: the container holds exactly this machine's tree (or the time is up).
      let local = localTree(project);
      let diff = [];
      for (const end = Date.now() + CONVERGE_MS; ; await sleep(500)) {
        local = localTree(project);
        diff = differences(local, remoteTree(pod));
        if (diff.length === 0 || Date.now() > end) break;
      }
      r.wrongContent = diff;
      // Edits on this machine must still be this machine's (nothing came back over them), and
      // deleted files must stay deleted here.
      for (const [k, c] of chosen.entries()) {
        const has = local.has(c.path);
        if (k < edits ? !has || !readFileSync(join(project, c.path), 'utf8').startsWith(`edited in round ${round}`) : has)
          r.wrongContent.push(`local:${c.path}`);
      }
      r.conflictsLocal = [...local.keys()].filter((p) => p.includes('.sync-conflict-'));
      r.conflictsContainer = [...remoteTree(pod).keys()].filter((p) => p.includes('.sync-conflict-'));
    } catch (err) {
      r.error = err.message.slice(0, 500);
    }
    await stop(session.proc);
    try {
      devtool(['down', '--volumes']);
      await volumesGone();
    } catch (err) {
      r.error ??= `down: ${err.message.slice(0, 300)}`;
    }
    results.push(r);
    process.stderr.write(`${JSON.stringify(r)}\n`);
  }
} finally {
  run('kubectl', ['--kubeconfig', kubeconfig, 'delete', 'namespace', ns, '--wait=false']);
}

/** The most rounds in a row without a conflict copy, a stuck settle, wrong content or an error. */
function longestCleanRun(rs) {
  let best = 0;
  let now = 0;
  for (const r of rs) {
    const clean = r.bootstrapped && r.settled && !r.error && r.conflictsLocal.length + r.conflictsContainer.length + r.wrongContent.length === 0;
    now = clean ? now + 1 : 0;
    best = Math.max(best, now);
  }
  return best;
}
const settleTimes = results
  .map((r) => r.settleMs)
  .filter((x) => x !== null)
  .sort((a, b) => a - b);
const conflictCopies = {
  local: results.reduce((n, r) => n + r.conflictsLocal.length, 0),
  container: results.reduce((n, r) => n + r.conflictsContainer.length, 0),
};
const count = (n) => figure(n, 'count');
writeResult({
  bench: 'dev-settle',
  figures: {
    conflictCopies: count(conflictCopies.local + conflictCopies.container),
    stuckSettles: count(results.filter((r) => r.bootstrapped && !r.settled).length),
    wrongContent: count(results.reduce((n, r) => n + r.wrongContent.length, 0)),
    // Rounds that failed for another reason (the cluster unreachable, a command failing): see stderr.
    errors: count(results.filter((r) => r.error).length),
    ...(settleTimes.length > 0 && {
      settleMedian: figure(settleTimes[Math.floor(settleTimes.length / 2)], 'ms'),
      settleSlowest: figure(settleTimes.at(-1), 'ms'),
    }),
  },
  targets: [
    { figure: 'conflictCopies', max: 0, text: 'no conflict copy' },
    { figure: 'stuckSettles', max: 0, text: 'every first sync settles' },
    { figure: 'wrongContent', max: 0, text: "every file in the container holds this machine's content" },
  ],
  details: {
    cli: relative(root, cli) || cli,
    rounds,
    files,
    editsPerRound: edits,
    deletesPerRound: deletes,
    bootstrappedRounds: results.filter((r) => r.bootstrapped).length,
    roundsWithConflicts: results.filter((r) => r.conflictsLocal.length + r.conflictsContainer.length > 0).length,
    conflictCopies,
    longestCleanRun: longestCleanRun(results),
    settleMs: settleTimes.length ? { min: settleTimes[0], median: settleTimes[Math.floor(settleTimes.length / 2)], max: settleTimes.at(-1) } : null,
  },
});
