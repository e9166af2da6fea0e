// Big trees with `devtool up` on the local cluster: a project of 100,000 files / 1 GB whose
// `node_modules` (60,000 of the files) its `.stignore` leaves out, next to the 10,000-file / 100 MB
// tree of bench/dev-sync.mjs, measured in the same run. For each tree:
//  - ready: `up` started -> "Forwarding until interrupted" (the dev pod's volume filled), and the
//    first sync settled (both Syncthings agree);
//  - idle, from --quiet seconds (30) after the first sync settled, nothing changing, over --idle
//    seconds (at least 60): CPU (utime+stime from /proc/<pid>/stat, in % of one core) and memory
//    (VmRSS from /proc/<pid>/status, summed, MB; mean and max of 1 s samples) of `up` and every
//    process below it (the local Syncthing runs as
//    `devtool-agent with-parent`, which execs it, a child of `up`; the watcher runs inside `up`),
//    also per process. Targets: under 2% of one core, under 300 MB.
// The `.stignore` is the one `devtool init -v1` proposes for the tree (a package.json at the top).
// Trees are generated once and kept outside the clone, keyed by their parameters: creating 100,000
// files on this machine's ext4 right after deleting many is slow (docs/sync.md).
// Writes its result under bench/results/ as dev-sync-big.json (bench/results.mjs): the big tree's figures, the 10,000-file
// tree's as the baseline.
//   node bench/dev-sync-big.mjs [--files 100000] [--mb 1024] [--modules 60000] [--idle 60] [--quiet 30]
//                               [--small-files 10000] [--small-mb 100] [--registry localhost:5000]
//                               [--cases 10k,100k]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, writeResult } from './results.mjs';
import { agentImage, buildCli, clusterUp, devtoolEnv, root, run, sleep } from './lib.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : typeof fallback === 'number' ? Number(process.argv[i + 1]) : process.argv[i + 1];
};
const big = { files: arg('--files', 100_000), mb: arg('--mb', 1024), modules: arg('--modules', 60_000) };
const small = { files: arg('--small-files', 10_000), mb: arg('--small-mb', 100), modules: 0 };
const idleS = Math.max(60, arg('--idle', 60));
const quietS = arg('--quiet', 30);
const registry = arg('--registry', 'localhost:5000');
const cases = arg('--cases', '10k,100k').split(',');

/**
 * A tree of `files` files of `mb` MB in all, `modules` of them under node_modules (packages of 100
 * files, two folders deep, as npm lays them out), the rest in folders of 100 under src/; built in a
 * `.partial` folder renamed at the end, so an interrupted generation is never reused.
 */
function tree({ files, mb, modules }) {
  const cacheRoot = existsSync('/var/cache/devtool-build') ? '/var/cache/devtool-build/bench-trees' : join(tmpdir(), 'devtool-bench-trees');
  const dir = join(cacheRoot, `v1-f${files}-mb${mb}-nm${modules}`);
  if (existsSync(dir)) return dir;
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const per = Math.floor((mb * 1024 * 1024) / files);
  const t0 = performance.now();
  for (let i = 0; i < files; i++) {
    const inModules = i < modules;
    const n = inModules ? i : i - modules;
    const d = inModules ? join(partial, 'node_modules', `pkg${Math.floor(n / 100)}`, 'lib') : join(partial, 'src', `d${Math.floor(n / 100)}`);
    if (n % 100 === 0) mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${n}.js`), Buffer.alloc(per, `// ${i}\n`));
  }
  writeFileSync(join(partial, 'package.json'), '{"name":"bench-big","version":"1.0.0"}\n');
  renameSync(partial, dir);
  console.error(`generated ${files} files / ${mb} MB in ${dir} in ${Math.round(performance.now() - t0)} ms`);
  return dir;
}

const kubeconfig = clusterUp();
buildCli();
const agent = agentImage(registry);
const work = mkdtempSync(join(tmpdir(), 'bench-big-'));
const ns = `bench-big-${Date.now().toString(36)}`;
const env = devtoolEnv({ kubeconfig, home: join(work, 'home'), image: agent });
const kubectl = (args, opts = {}) => run('kubectl', ['--kubeconfig', kubeconfig, '-n', ns, ...args], { env, ...opts });
const devtool = (project, args, opts = {}) => run(process.execPath, [join(root, 'dist/devtool.cjs'), ...args], { cwd: project, env, ...opts });

/** Writes the `.stignore` init proposes (init never replaces one, so the old one goes first) and the bench's manifest. */
function prepare(project) {
  rmSync(join(project, '.stignore'), { force: true });
  devtool(project, ['init', '-v1', '--replace', '--file', 'init-proposed.yml']);
  rmSync(join(project, 'init-proposed.yml'));
  writeFileSync(join(project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  return readFileSync(join(project, '.stignore'), 'utf8');
}

/** `pid` and all its descendants, from the PPid of every /proc/<pid>/stat. */
function processTree(pid) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (!stat) continue;
    if (!children.has(stat.ppid)) children.set(stat.ppid, []);
    children.get(stat.ppid).push(Number(name));
  }
  const out = [];
  for (const queue = [pid]; queue.length; ) {
    const p = queue.shift();
    out.push(p);
    queue.push(...(children.get(p) ?? []));
  }
  return out;
}
/** comm, ppid and utime+stime (clock ticks) of a process; undefined once it is gone. */
function readStat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const fields = text.slice(close + 2).split(' ');
    return { comm: text.slice(text.indexOf('(') + 1, close), ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}
function rssKb(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
const CLK_TCK = Number(run('getconf', ['CLK_TCK']).trim());

/** CPU and memory of `pid`'s process tree over `seconds`, sampled every second. */
async function sampleIdle(pid, seconds) {
  const first = new Map();
  const last = new Map();
  const names = new Map();
  const rssSums = [];
  const rssBy = new Map();
  const start = performance.now();
  for (let s = 0; s <= seconds; s++) {
    if (s > 0) await sleep(start + s * 1000 - performance.now());
    let sum = 0;
    for (const p of processTree(pid)) {
      const st = readStat(p);
      if (!st) continue;
      // A process that appears during the window counts from zero.
      if (!first.has(p)) first.set(p, s === 0 ? st.ticks : 0);
      last.set(p, st.ticks);
      names.set(p, p === pid ? 'devtool up (node)' : st.comm);
      const kb = rssKb(p);
      sum += kb;
      rssBy.set(p, [...(rssBy.get(p) ?? []), kb]);
    }
    rssSums.push(sum);
  }
  const elapsedS = (performance.now() - start) / 1000;
  const cpu = (p) => ((last.get(p) - first.get(p)) / CLK_TCK / elapsedS) * 100;
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const r1 = (x) => Math.round(x * 10) / 10;
  return {
    seconds: r1(elapsedS),
    cpuPercentOfOneCore: r1([...last.keys()].reduce((a, p) => a + cpu(p), 0)),
    rssMb: { mean: r1(mean(rssSums) / 1024), max: r1(Math.max(...rssSums) / 1024) },
    processes: [...names].map(([p, name]) => ({ pid: p, name, cpuPercent: r1(cpu(p)), rssMb: r1(mean(rssBy.get(p)) / 1024) })),
  };
}

/** `up` until ready and settled, idle sampling, then `down --volumes`. */
async function measure(label, shape) {
  const project = tree(shape);
  const stignore = prepare(project);
  const start = performance.now();
  const proc = spawn(process.execPath, [join(root, 'dist/devtool.cjs'), 'up', '-n', ns], { cwd: project, env });
  let out = '';
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (out += c));
  const exited = new Promise((r) => proc.once('exit', r));
  const waitFor = async (re, what) => {
    for (const until = Date.now() + 900_000; Date.now() < until; await sleep(50)) {
      if (proc.exitCode !== null) throw new Error(`up exited ${proc.exitCode}: ${out}`);
      if (/is not settled yet/.test(out)) throw new Error(`the first sync did not settle: ${out}`);
      const m = re.exec(out);
      if (m) return m;
    }
    throw new Error(`${what} not seen in 15 min: ${out}`);
  };
  let readyMs;
  let settledMs;
  let idle;
  try {
    await waitFor(/Forwarding until interrupted/, 'ready');
    readyMs = performance.now() - start;
    const bootstrapped = out.includes('into the new volume');
    settledMs = bootstrapped ? Number((await waitFor(/first sync settled in ([\d.]+)s/, 'settled'))[1]) * 1000 : readyMs;
    // What settling started (a last index exchange) is over, and V8 has collected the first pass's
    // lists (a full GC came 20 s after the settle for 40,000 files: node's RSS 210 -> 150 MB).
    await sleep(quietS * 1000);
    idle = await sampleIdle(proc.pid, idleS);
    const found = idle.processes.map((p) => p.name);
    if (!found.includes('syncthing')) throw new Error(`the local Syncthing was not found below up (pid ${proc.pid}): ${found.join(', ')}`);
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
  devtool(project, ['down', '--volumes', '-n', ns]);
  await volumesGone();
  return {
    label,
    ...shape,
    syncedFiles: shape.files - shape.modules,
    stignore: stignore.split('\n').filter((l) => l && !l.startsWith('//')),
    readyMs: Math.round(readyMs),
    settledMs: Math.round(settledMs),
    idle,
    warnings: out.split('\n').filter((l) => /^\s*!/.test(l)),
  };
}
async function volumesGone() {
  for (const until = Date.now() + 120_000; Date.now() < until; await sleep(200)) {
    const pvs = run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'pv', '-o', 'jsonpath={range .items[*]}{.spec.claimRef.namespace}{"\\n"}{end}']);
    if (!pvs.split('\n').includes(ns)) return;
  }
  throw new Error(`the volumes of namespace ${ns} were not deleted in 120 s`);
}

run('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', ns]);
try {
  kubectl(['create', 'deployment', 'api', '--image=localhost:5000/node:20', '--', 'sleep', 'infinity']);
  kubectl(['rollout', 'status', 'deployment/api', '--timeout', '5m']);
  const results = [];
  for (const [label, shape] of [
    ['10k', small],
    ['100k', big],
  ].filter(([label]) => cases.includes(label)))
    results.push(await measure(label, shape));
  const byLabel = Object.fromEntries(results.map((r) => [r.label, r]));
  const measured = byLabel['100k'] ?? byLabel['10k'];
  const baseline = measured === byLabel['100k'] ? byLabel['10k'] : undefined;
  const figuresOf = (r) => ({
    ready: figure(r.readyMs, 'ms'),
    settled: figure(r.settledMs, 'ms'),
    idleCpu: figure(r.idle.cpuPercentOfOneCore, '% of one core'),
    idleRssMean: figure(r.idle.rssMb.mean, 'MB'),
    idleRssMax: figure(r.idle.rssMb.max, 'MB'),
  });
  writeResult({
    bench: 'dev-sync-big',
    figures: figuresOf(measured),
    baseline: baseline ? figuresOf(baseline) : {},
    targets: [
      { figure: 'idleCpu', max: 2, text: 'idle under 2% of one core' },
      { figure: 'idleRssMean', max: 300, text: 'idle under 300 MB' },
    ],
    details: { tree: measured.label, baselineTree: baseline?.label, idleSeconds: idleS, quietSecondsAfterSettled: quietS, results },
  });
} finally {
  run('kubectl', ['--kubeconfig', kubeconfig, 'delete', 'namespace', ns, '--wait=false']);
  rmSync(work, { recursive: true, force: true });
}
