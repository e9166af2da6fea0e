/**
 * Typing while the first sync of a new volume settles (docs/sync-new-volume.md): four rounds,
 * each a new volume filled by the bootstrap with 3,000 files; as soon as
 * `up` says the copy is in, 20 files are edited and 5 deleted here at moments spread over 1.5 s. Once
 * settled, no `.sync-conflict-` copy may exist on either side, and the container must hold exactly
 * this machine's tree (every edit with this machine's content, no deleted file back). Before the
 * settle removed the bootstrap's stale copies, most rounds left a conflict copy per edited file.
 * A fourth round cuts `up` off before the settle and restarts the container's Syncthing (as a dev
 * pod replaced meanwhile would) before the next `up` settles it.
 * `bench/dev-settle.mjs` runs the same for 30 rounds.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool, spawnDevtool } from './cli.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';
import { tearDownDev } from './up-session.ts';

const FILES = 3000;
const EDITS = 20;
const DELETES = 5;

let s: ClusterSandbox;
let project: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  s = await clusterSandbox('dev-settle');
  await createSleepingDeployment(s, 'api');
  project = join(s.root, 'project');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});
after(() => tearDownDev(s, env, [project]));

const dev = (args: string[], timeoutMs = 120_000) => runDevtool([args[0]!, '-n', s.namespace, ...args.slice(1)], { env, cwd: project, timeoutMs });

function writeProject(round: number): void {
  rmSync(project, { recursive: true, force: true });
  for (let i = 0; i < FILES; i++) {
    const d = join(project, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${i}.txt`), `round ${round} file ${i}\n`);
  }
  writeFileSync(join(project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
}

function localTree(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(relative(project, p), createHash('md5').update(readFileSync(p)).digest('hex'));
    }
  };
  walk(project);
  return out;
}

/** /app in the container, Syncthing's own .stfolder and .stignore left out. */
function remoteTree(): Map<string, string> {
  // A file Syncthing replaces meanwhile may vanish under md5sum: left out this time (the caller looks again).
  const script = 'cd /app && find . -path ./.stfolder -prune -o -type f ! -path ./.stignore -print0 | xargs -0 -r md5sum 2>/dev/null; true';
  const r = dev(['exec', '--', 'sh', '-c', script]);
  assert.equal(r.code, 0, r.stderr);
  const out = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^([0-9a-f]{32}) {2}\.\/(.*)$/.exec(line);
    if (m) out.set(m[2]!, m[1]!);
  }
  return out;
}

function differences(local: Map<string, string>, remote: Map<string, string>): string[] {
  const diff = [...local].filter(([p, h]) => remote.get(p) !== h).map(([p]) => p);
  for (const p of remote.keys()) if (!local.has(p)) diff.push(`only in the container: ${p}`);
  return diff;
}

/** `up` in the background; its output as it comes, and a stop as Ctrl-C. */
function upUntilCopied(): { output(): string; stop(): Promise<void>; kill(): Promise<void> } {
  const proc = spawnDevtool(['up', '-n', s.namespace], { env, cwd: project });
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const end = async (signal: NodeJS.Signals) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    await new Promise((r) => proc.once('exit', r));
  };
  return { output: () => out, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

async function waitFor(what: string, cond: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !cond(); await new Promise((r) => setTimeout(r, 200))) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000}s`);
  }
}

/** Ends the container's Syncthing (its supervisor starts it again), by its process name: any image's sh can. */
const KILL_SYNCTHING = 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = syncthing ] && kill ${p#/proc/}; done; true';

for (const [round, restart] of [
  [0, false],
  [1, false],
  [2, false],
  [3, true],
] as const) {
  const how = restart
    ? "while no up runs (up cut off before the settle, the container's Syncthing restarted) leave no conflict copy once the next up settles them"
    : 'while the first sync settles leave no conflict copy';
  test(`round ${round}: 20 edits and 5 deletions ${how}, and this machine's content`, {
    timeout: 600_000,
  }, async () => {
    writeProject(round);
    // Spread over the tree and over the 2 s after ready, differently in each round.
    const chosen = Array.from({ length: EDITS + DELETES }, (_, k) => {
      const i = (k * 113 + round * 37) % FILES;
      return { path: join(`d${Math.floor(i / 100)}`, `f${i}.txt`), at: (k * 83 + round * 211) % 1500 };
    });
    // Not startUp: the typing starts as soon as the copy is in, before `up` says it is ready (by
    // then the container may have settled most of it, and the test would prove less).
    let session = upUntilCopied();
    try {
      await waitFor('the copy into the new volume', () => /copied 300\d files .* into the new volume/.test(session.output()), 240_000).catch((err: Error) =>
        assert.fail(`${err.message}; up said:\n${session.output()}`),
      );
      // Cut off at once: nothing can have settled yet.
      if (restart) await session.kill();
      const t0 = Date.now();
      await Promise.all(
        chosen.map(async (c, k) => {
          await new Promise((r) => setTimeout(r, c.at));
          if (k < EDITS) writeFileSync(join(project, c.path), `edited in round ${round} at +${Date.now() - t0} ms\n`);
          else unlinkSync(join(project, c.path));
        }),
      );
      if (restart) {
        // The container's Syncthing starts again from its configuration, which says send-receive: the
        // folder must stay receive-only until settled, or its stale copies are announced as the
        // container's changes (what a dev pod replaced before the settle, or a crash, does too).
        const killed = dev(['exec', '--', 'sh', '-c', KILL_SYNCTHING]);
        assert.equal(killed.code, 0, killed.stderr);
        session = upUntilCopied();
        // A cut-off settle is finished before `up` says it is ready.
        await waitFor('the next up ready', () => /Forwarding until interrupted/.test(session.output()), 240_000);
      } else await waitFor('first sync settled', () => /first sync settled in/.test(session.output()), 120_000);
      let diff: string[] = [];
      await waitFor(
        "the container holds this machine's tree",
        () => {
          diff = differences(localTree(), remoteTree());
          return diff.length === 0;
        },
        60_000,
      ).catch((err: Error) => assert.fail(`${err.message}: ${diff.slice(0, 20).join(', ')}`));
      const local = localTree();
      for (const [k, c] of chosen.entries()) {
        if (k < EDITS) assert.match(readFileSync(join(project, c.path), 'utf8'), new RegExp(`^edited in round ${round}`), c.path);
        else assert.equal(local.has(c.path), false, `${c.path} was deleted here and came back`);
      }
      assert.deepEqual(
        [...local.keys()].filter((p) => p.includes('.sync-conflict-')),
        [],
        'no conflict copy here',
      );
      assert.deepEqual(
        [...remoteTree().keys()].filter((p) => p.includes('.sync-conflict-')),
        [],
        'no conflict copy in the container',
      );
      assert.doesNotMatch(session.output(), /sync conflict/);
      if (restart) {
        // Settled, the copy is forgotten (devtool-agent settled): the next Syncthing start writes
        // the folder send-receive, so what the container writes still reaches this machine.
        assert.equal(dev(['exec', '--', 'sh', '-c', KILL_SYNCTHING]).code, 0);
        assert.equal(dev(['exec', '--', 'sh', '-c', 'sleep 2; echo from the container > /app/after-restart.txt']).code, 0);
        await waitFor('a file written in the container after the restart, here', () => existsSync(join(project, 'after-restart.txt')), 60_000);
        assert.equal(readFileSync(join(project, 'after-restart.txt'), 'utf8'), 'from the container\n');
      }
    } finally {
      await session.stop();
      assert.equal(dev(['down', '--volumes']).code, 0);
    }
  });
}
