/**
 * The `.stignore` `init` proposes, at work on the local cluster (docs/sync.md, "Big trees"): a Node
 * project with a `node_modules` of 2,000 files. Nothing of node_modules crosses either way; the
 * local watcher of `up` holds one inotify watch per synced folder, none per file and none in
 * node_modules (read from /proc/<pid>/fdinfo), nor does the agent's rescanner in the container;
 * and `(?d)` lets a folder deleted here go in the container although it holds a node_modules
 * installed there.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let folder: string;
let env: NodeJS.ProcessEnv;
const folders: string[] = [];

before(async () => {
  s = await clusterSandbox('dev-ignores');
  await createSleepingDeployment(s, 'api');
  folder = join(s.root, 'project');
  for (let p = 0; p < 40; p++) {
    mkdirSync(join(folder, 'node_modules', `pkg${p}`, 'lib'), { recursive: true });
    for (let f = 0; f < 50; f++) writeFileSync(join(folder, 'node_modules', `pkg${p}`, 'lib', `f${f}.js`), `// ${p}/${f}\n`);
  }
  for (let d = 0; d < 5; d++) {
    mkdirSync(join(folder, 'src', `d${d}`), { recursive: true });
    for (let f = 0; f < 20; f++) writeFileSync(join(folder, 'src', `d${d}`, `f${f}.js`), `// ${d}/${f}\n`);
  }
  mkdirSync(join(folder, 'packages', 'web'), { recursive: true });
  writeFileSync(join(folder, 'packages', 'web', 'index.js'), 'web\n');
  writeFileSync(join(folder, 'package.json'), '{"name":"ignores","version":"1.0.0"}\n');
  folders.push(folder);
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});
after(() => tearDownDev(s, env, folders));

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
const inContainer = (script: string) => dev(['exec', '--', 'sh', '-c', script]);

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The inotify watches a process holds: one "inotify wd:" line per watch in the fdinfo of its inotify fds. */
function inotifyWatches(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    if (target === 'anon_inode:inotify')
      n += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length;
  }
  return n;
}

test("init's .stignore: node_modules stays on each side, watched nowhere here, and (?d) lets a folder holding one be deleted", {
  timeout: 600_000,
}, async () => {
  const init = runDevtool(['init', '-v1', '--file', 'proposed.yml'], { env, cwd: folder });
  assert.equal(init.code, 0, init.stderr);
  assert.match(readFileSync(join(folder, '.stignore'), 'utf8'), /^\(\?d\)node_modules$/m);
  rmSync(join(folder, 'proposed.yml'));
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');

  const up = await startUp(['-n', s.namespace], { env, cwd: folder });
  await waitFor('first sync settled', () => /first sync settled in/.test(up.output()), 120_000);
  assert.equal(inContainer('test -e /app/node_modules && echo yes || echo no').stdout.trim(), 'no', 'node_modules was not copied');
  assert.equal(inContainer('ls /app/src/d4 | wc -l').stdout.trim(), '20');

  // 9 synced folders here (the top, src, src/d0..d4, packages, packages/web): as many watches, not
  // one per file (2,100 files), none of node_modules' 81 folders.
  const watches = inotifyWatches(up.proc.pid!);
  assert.ok(watches >= 9 && watches < 30, `up holds ${watches} inotify watches`);

  // The agent's rescanner (in PID 1, the agent) does not watch node_modules in the container either:
  // 50 packages installed there (101 folders) add no watch.
  const agentWatches = () => Number(inContainer('cat /proc/1/fdinfo/* 2>/dev/null | grep -c "^inotify wd:"').stdout.trim());
  const before = agentWatches();
  assert.equal(inContainer('for p in $(seq 1 50); do mkdir -p /app/node_modules/p$p/lib; done; echo ok').stdout.trim(), 'ok');
  await new Promise((r) => setTimeout(r, 2000));
  assert.ok(before >= 9, `the agent holds ${before} inotify watches for 9 synced folders`);
  assert.equal(agentWatches(), before, 'node_modules in the container is not watched');

  // Installed in the container: stays there, even in a synced folder.
  assert.equal(inContainer('mkdir -p /app/packages/web/node_modules/dep && echo dep > /app/packages/web/node_modules/dep/i.js && echo ok').stdout.trim(), 'ok');
  writeFileSync(join(folder, 'src', 'd0', 'edit.js'), 'edited\n');
  await waitFor('a local edit in the container', () => inContainer('cat /app/src/d0/edit.js 2>/dev/null').stdout === 'edited\n');
  assert.ok(!existsSync(join(folder, 'packages', 'web', 'node_modules')), "the container's node_modules did not arrive");

  // The folder deleted here goes there too: its node_modules alone would keep it without (?d).
  rmSync(join(folder, 'packages', 'web'), { recursive: true });
  await waitFor(
    'the deleted folder gone in the container',
    () => inContainer('test -e /app/packages/web && echo yes || echo no').stdout.trim() === 'no',
    60_000,
  );
  assert.ok(existsSync(join(folder, 'node_modules', 'pkg0', 'lib', 'f0.js')), 'the local node_modules is untouched');
  await up.stop();
});
