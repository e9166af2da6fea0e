// Runs the test files of one kind with node's test runner (TypeScript through tsx):
//   unit: *.test.ts but not *.e2e.test.ts, under api, src, ingress, server, test, cluster, bench
//         and scripts (pure logic, fakes allowed, no cluster)
//   e2e:  **/*.e2e.test.ts (the built CLI as a process, and the local cluster)
// Node 20's --test takes no globs, so the files are found here.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const kind = process.argv[2];
const filter = process.argv[3];
if (kind !== 'unit' && kind !== 'e2e') {
  console.error('usage: node scripts/run-tests.mjs unit|e2e [path-substring]');
  process.exit(2);
}

function find(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) find(path, out);
    else if (entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const files = ['api', 'src', 'ingress', 'server', 'test', 'cluster', 'bench', 'scripts']
  .flatMap((d) => {
    try {
      return find(d);
    } catch {
      return [];
    }
  })
  .filter((f) => (kind === 'e2e' ? f.endsWith('.e2e.test.ts') : !f.endsWith('.e2e.test.ts')))
  .filter((f) => !filter || f.includes(filter))
  .sort();

if (files.length === 0) {
  console.error(`no ${kind} test files found`);
  process.exit(1);
}
// e2e files run one at a time (they share the cluster's CPU); no single test may take more than
// 10 minutes, so a hang fails that test by name instead of eating CI's whole time budget.
const e2eFlags = ['--test-concurrency=1', '--test-timeout=600000'];
const run = (list, flags, options) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...flags, ...list], options);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

// Files that mostly wait (a Kubernetes token's real 10-minute expiry) run beside the others in a
// second runner, so they add their minutes to none; their output follows the others'. They start
// once the files that stop or restart parts of the cluster are done, and so after the files on two
// nodes, which run first (those would fail them for nothing: pods and claims on a node that goes).
// Alone (a filter that names only them), they run like any other file.
const BESIDE = ['test/e2e/service-kube-expiry.e2e.test.ts'];
const DISRUPTIVE = ['test/e2e/dev-faults.e2e.test.ts'];
// Files that run first, on a cluster of two nodes (cluster/lib/nodes.sh), in this order, then the
// cluster goes back to one node: Compose deploys, pipelines and hosted builds whose pods land on
// either node, and a dev container's deploy. The files that add and remove nodes themselves come
// last (each goes back to one node when it ends). Every other file expects one node.
const TWO_NODES = [
  'test/e2e/compose-deploy.e2e.test.ts',
  'test/e2e/pipeline.e2e.test.ts',
  'test/e2e/service-build.e2e.test.ts',
  'test/e2e/dev-deploy.e2e.test.ts',
  'cluster/nodes.e2e.test.ts',
  'test/e2e/multi-node.e2e.test.ts',
];
const several = kind === 'e2e' && files.length > 1;
const beside = several ? files.filter((f) => BESIDE.includes(f)) : [];
const onTwoNodes = several ? TWO_NODES.filter((f) => files.includes(f)) : [];
const main = files.filter((f) => !beside.includes(f) && !onTwoNodes.includes(f));
const lastDisruptive = Math.max(-1, ...DISRUPTIVE.map((f) => main.indexOf(f)));
const phases = beside.length > 0 ? [main.slice(0, lastDisruptive + 1), main.slice(lastDisruptive + 1)] : [[], main];
const flags = kind === 'e2e' ? e2eFlags : [];

/** The local cluster with `n` nodes (cluster.sh up adds or removes the extra ones); whether it worked. */
function nodes(n) {
  const r = spawnSync('bash', ['cluster/cluster.sh', 'up'], {
    env: { ...process.env, DEVTOOL_CLUSTER_NODES: String(n) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) console.error(`run-tests: the local cluster with ${n} node(s) failed to start (cluster.sh up, above)`);
  return r.status === 0;
}

let status = 0;
if (onTwoNodes.length > 0) {
  console.log(`\n=== on two nodes: ${onTwoNodes.join(', ')} ===`);
  // Without a second node they still run (on one), and the run fails.
  if (!nodes(2)) status = 1;
  status ||= await run(onTwoNodes, flags, { stdio: 'inherit' });
  if (!nodes(1)) status = 1;
  console.log('\n=== on one node ===');
}
status ||= phases[0].length > 0 ? await run(phases[0], flags, { stdio: 'inherit' }) : 0;
let besideRun = Promise.resolve(0);
let besideLog;
if (beside.length > 0) {
  besideLog = join(mkdtempSync(join(tmpdir(), 'devtool-e2e-beside-')), 'output.txt');
  const out = openSync(besideLog, 'w');
  besideRun = run(beside, ['--test-timeout=1500000'], { stdio: ['ignore', out, out], env: { ...process.env, DEVTOOL_E2E_SLOW: '1' } });
}
if (phases[1].length > 0) {
  const second = await run(phases[1], flags, { stdio: 'inherit' });
  status ||= second;
}
const besideStatus = await besideRun;
if (besideLog) {
  console.log(`\n=== ${beside.join(', ')} (ran beside the others) ===`);
  process.stdout.write(readFileSync(besideLog, 'utf8'));
}
process.exit(status || besideStatus);
