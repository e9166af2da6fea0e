/**
 * The first pass of `up` (docs/sync.md, "Nothing lost"): whatever happened on either side while
 * no `up` ran, or after one was killed, no local file is overwritten or deleted without a copy,
 * nothing is lost on either side, and `up` says what it kept. Each round changes, deletes,
 * creates and renames files on each side and on both, with 1, 999, 1,001 and 5,000 files where
 * the container changes or deletes what this machine has (Syncthing lists needed files in pages
 * of 1,000: the first pass once read one page and let the rest overwrite or delete local files).
 * Two test files run the rounds, one stopping `up` between them, one killing it (a file has 10
 * minutes).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { startUp, tearDownDev, type UpSession } from './up-session.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let folder: string;
let env: NodeJS.ProcessEnv;
let up: UpSession | undefined;

/** Registers the rounds of one test file: 1, 999, 1,001 and 5,000 files, `up` stopped or killed before each. */
export function firstPassRounds(how: 'stopped' | 'killed'): void {
  before(() => setUp(`first-pass-${how}`));
  after(async () => {
    await tearDownDev(s, env, [folder]);
  });
  if (how === 'stopped')
    test(
      'first pass after down (the volume kept): what was deleted or renamed here stays so, a file the container changed comes back as a conflict copy',
      { timeout: 420_000 },
      () => downRound('across-down'),
    );
  for (const n of [1, 999, 1001, 5000]) {
    test(
      `first pass, ${n} file(s) changed and deleted in the container while up was ${how}: nothing local overwritten or deleted, nothing lost`,
      { timeout: 420_000 },
      () => round(`r${n}`, n, how),
    );
  }
}

async function setUp(prefix: string): Promise<void> {
  s = await clusterSandbox(prefix);
  await createSleepingDeployment(s, 'fp');
  folder = join(s.root, 'project');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  fp:\n    sync: [".:/app"]\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  up = await startUp(['-n', s.namespace], { env, cwd: folder });
}

/** What `exec` says when its connection went before the command ended (src/dev/ssh-program.ts). */
const CONNECTION_LOST = /connection to the dev container closed before the command ended/;

/**
 * A script in the dev container through `devtool exec`: the container's side of a round (its
 * edits while no `up` runs) and looks at its files. An exec that lost its connection (seen three
 * times in some ten suite runs, twice in CI, cause not found yet: see docs/sync.md) is run once
 * more, since every script here is idempotent, and reported with the pod's state, the agent's
 * logs and devtool.log; it is not what these rounds test. Any other failure fails the round, with
 * the same report (CI shows only the failure's text).
 */
const inContainer = async (script: string, timeoutMs = 120_000): Promise<string> => {
  for (let attempt = 1; ; attempt++) {
    const r = runDevtool(['exec', '-n', s.namespace, '--', 'bash', '-c', script], { env, cwd: folder, timeoutMs });
    if (r.code === 0) return r.stdout;
    const again = runDevtool(['exec', '-n', s.namespace, '--', 'true'], { env, cwd: folder, timeoutMs: 60_000 });
    const report =
      `in the container: ${script.slice(0, 200)}\nstdout: ${r.stdout.slice(-2000)}\nstderr: ${r.stderr}\n` +
      `a second exec right after: exit ${again.code} ${again.stderr}\n${await devPodReport()}`;
    if (attempt === 1 && CONNECTION_LOST.test(r.stderr)) {
      console.log(`exec lost its connection; running the script again:\n${report}`);
      continue;
    }
    assert.fail(report);
  }
};

/** The dev pod's containers (restarts, last state) and the agent's last log lines, for a failure's report. */
async function devPodReport(): Promise<string> {
  const pods = (await s.core.listNamespacedPod({ namespace: s.namespace })).items;
  const lines: string[] = [];
  for (const p of pods) {
    for (const c of p.status?.containerStatuses ?? []) {
      lines.push(`${p.metadata?.name}/${c.name}: restarts ${c.restartCount}, state ${JSON.stringify(c.state)}, last ${JSON.stringify(c.lastState)}`);
    }
    const log = await s.core.readNamespacedPodLog({ name: p.metadata!.name!, namespace: s.namespace, tailLines: 40 }).catch((e: Error) => e.message);
    lines.push(`--- log of ${p.metadata?.name}:\n${log}`);
  }
  // The SSH server's and Syncthing's own logs, in the container (the pod log has the supervisor's).
  const agentLogs = runDevtool(['exec', '-n', s.namespace, '--', 'sh', '-c', 'for f in /var/devtool/logs/*; do echo "--- $f"; tail -n 30 "$f"; done'], {
    env,
    cwd: folder,
    timeoutMs: 60_000,
  });
  lines.push(agentLogs.stdout || `(agent logs not read: ${agentLogs.stderr})`);
  const log = join(env.DEVTOOL_HOME ?? '', 'devtool.log');
  if (existsSync(log)) lines.push(`--- devtool.log, last lines:\n${readFileSync(log, 'utf8').split('\n').slice(-80).join('\n')}`);
  return lines.join('\n');
}

/** devtool.log as it is now (empty before the first command). */
function devtoolLog(): Buffer {
  const log = join(env.DEVTOOL_HOME ?? '', 'devtool.log');
  return existsSync(log) ? readFileSync(log) : Buffer.alloc(0);
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const SMALL = 5;
/** Categories with a fixed few files: what each side does while no `up` runs. */
const FEW = [
  'both',
  'local-deleted',
  'local-changed',
  'container-renamed',
  'local-renamed',
  'container-deleted-local-changed',
  'local-deleted-container-changed',
] as const;

function writeFiles(dir: string, count: number, content: (i: number) => string): void {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(dir, `f${i}.txt`), content(i));
}

/** The conflict copies in `dir` (not Syncthing's temporary files of one being pulled, `.syncthing.*.tmp`). */
const conflictCopies = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.includes('.sync-conflict-') && !n.startsWith('.syncthing.')) : []);

async function stopOrKill(how: 'stopped' | 'killed'): Promise<void> {
  const session = up!;
  up = undefined;
  if (how === 'stopped') return session.stop();
  session.proc.kill('SIGKILL');
  await new Promise((r) => (session.proc.exitCode !== null || session.proc.signalCode !== null ? r(null) : session.proc.once('exit', r)));
}

/**
 * One round in its own folder `r`: files made while `up` runs and synced, then `up` stopped (or
 * killed), both sides changed, `up` again, and every outcome checked.
 */
async function round(r: string, n: number, how: 'stopped' | 'killed'): Promise<void> {
  // A round that failed before it started `up` again leaves none running: each round is its own.
  up ??= await startUp(['-n', s.namespace], { env, cwd: folder });
  const root = join(folder, r);
  const original = (cat: string, i: number) => `${r}/${cat}/${i} original\n`;
  writeFiles(join(root, 'container-changed'), n, (i) => original('container-changed', i));
  writeFiles(join(root, 'container-deleted'), n, (i) => original('container-deleted', i));
  for (const cat of FEW) writeFiles(join(root, cat), SMALL, (i) => original(cat, i));
  mkdirSync(join(root, 'empty-dir'));
  writeFileSync(join(root, 'target-a.txt'), 'a\n');
  writeFileSync(join(root, 'target-b.txt'), 'b\n');
  symlinkSync('target-a.txt', join(root, 'link'));
  const inC = (p: string) => `/app/${r}/${p}`;
  await waitFor(
    `${r}: the files in the container`,
    async () =>
      (
        await inContainer(
          `find /app/${r} -type f ! -name '.syncthing.*' 2>/dev/null | wc -l; ` + `test -L ${inC('link')} && test -d ${inC('empty-dir')} && echo ok || true`,
        )
      ).trim() === `${2 * n + FEW.length * SMALL + 2}\nok`,
    300_000,
  );

  await stopOrKill(how);

  // The container, while no `up` runs: the app or an `exec` changes, deletes, creates, renames.
  await inContainer(
    [
      `cd /app/${r}`,
      `for f in container-changed/*.txt both/*.txt local-deleted-container-changed/*.txt; do echo "container edit of $f" > "$f"; done`,
      'rm -rf container-deleted container-deleted-local-changed empty-dir',
      'mkdir -p container-created && for i in $(seq 0 4); do echo "container new $i" > container-created/f$i.txt; done',
      // Idempotent, like every step here: a script that lost its connection runs again.
      'for i in $(seq 0 4); do if [ -e container-renamed/f$i.txt ]; then mv container-renamed/f$i.txt container-renamed/g$i.txt; fi; done',
      'ln -sfn target-b.txt link',
      // Created on both sides with different content.
      'mkdir -p created-both && for i in $(seq 0 4); do echo "container side $i" > created-both/f$i.txt; done',
    ].join(' && '),
    300_000,
  );
  // This machine, meanwhile (one second later: the container's edits are older).
  await new Promise((res) => setTimeout(res, 1100));
  for (let i = 0; i < SMALL; i++) {
    writeFileSync(join(root, 'both', `f${i}.txt`), `laptop edit ${i}\n`);
    rmSync(join(root, 'local-deleted', `f${i}.txt`));
    writeFileSync(join(root, 'local-changed', `f${i}.txt`), `laptop edit ${i}\n`);
    renameSync(join(root, 'local-renamed', `f${i}.txt`), join(root, 'local-renamed', `g${i}.txt`));
    writeFileSync(join(root, 'container-deleted-local-changed', `f${i}.txt`), `laptop edit ${i}\n`);
    rmSync(join(root, 'local-deleted-container-changed', `f${i}.txt`));
  }
  writeFiles(join(root, 'created-both'), SMALL, (i) => `laptop side ${i}\n`);
  writeFiles(join(root, 'local-created'), SMALL, (i) => `laptop new ${i}\n`);

  const logFrom = devtoolLog().length;
  up = await startUp(['-n', s.namespace], { env, cwd: folder });
  const out = up.output();

  // Right after the first pass: no local file was overwritten or deleted.
  const read = (p: string) => readFileSync(join(root, p), 'utf8');
  for (let i = 0; i < n; i++) {
    assert.equal(read(`container-changed/f${i}.txt`), original('container-changed', i), `container-changed/f${i}.txt kept`);
    assert.equal(read(`container-deleted/f${i}.txt`), original('container-deleted', i), `container-deleted/f${i}.txt kept`);
  }
  for (let i = 0; i < SMALL; i++) {
    assert.equal(read(`both/f${i}.txt`), `laptop edit ${i}\n`);
    assert.equal(read(`container-deleted-local-changed/f${i}.txt`), `laptop edit ${i}\n`);
    assert.equal(read(`created-both/f${i}.txt`), `laptop side ${i}\n`);
    assert.equal(read(`container-renamed/f${i}.txt`), original('container-renamed', i));
  }
  assert.ok(existsSync(join(root, 'empty-dir')), 'an empty folder the container deleted is kept');
  assert.equal(readlinkSync(join(root, 'link')), 'target-a.txt', 'a link the container changed keeps its local target');
  // Changed: its n files and the link (where this machine edited later, this machine's is newer
  // anyway). Deleted: n files, the 5 renamed away, and 3 folders, or 2: the container may already
  // have taken this machine's edits into the folder it deleted, and so have made it anew.
  const said = /the dev container changed (\d+) path\(s\) and deleted (\d+) path\(s\) that this machine has: kept this machine's version/.exec(out);
  assert.ok(said, `up says what it kept:\n${out}`);
  // Or n without the link, when the `up` cut off was the first one, before its first sync settled
  // (this round run alone): the container's folder was still receive-only, and its puller had
  // already put this machine's link back (Syncthing makes no conflict copy of a link), so the first
  // pass finds the link unchanged. It ends as this machine's either way (below).
  const settledBefore = !devtoolLog().subarray(logFrom).toString('utf8').includes('was cut off before it settled');
  assert.ok(settledBefore ? Number(said[1]) === n + 1 : [n, n + 1].includes(Number(said[1])), said[0]);
  assert.ok([n + 7, n + 8].includes(Number(said[2])), said[0]);

  // Then, both ways: each side ends with every version, the container's as conflict copies.
  await waitFor(
    `${r}: conflict copies of the container's edits`,
    () =>
      conflictCopies(join(root, 'container-changed')).length === n &&
      conflictCopies(join(root, 'both')).length === SMALL &&
      conflictCopies(join(root, 'created-both')).length === SMALL &&
      conflictCopies(join(root, 'local-deleted-container-changed')).length === SMALL,
    300_000,
  );
  const copy = conflictCopies(join(root, 'container-changed')).find((c) => c.startsWith('f0.'))!;
  assert.equal(read(`container-changed/${copy}`), 'container edit of container-changed/f0.txt\n');
  for (let i = 0; i < SMALL; i++) {
    assert.ok(existsSync(join(root, 'container-renamed', `g${i}.txt`)), 'a file the container renamed arrives under its new name');
    assert.ok(!existsSync(join(root, 'local-deleted-container-changed', `f${i}.txt`)), 'a file deleted here but changed there stays deleted');
  }
  for (const c of conflictCopies(join(root, 'local-deleted-container-changed')))
    assert.match(
      read(`local-deleted-container-changed/${c}`),
      /^container edit of local-deleted-container-changed\/f\d\.txt\n$/,
      'its edit there comes as a copy',
    );
  await waitFor(`${r}: files created in the container, locally`, () => [0, 1, 2, 3, 4].every((i) => existsSync(join(root, 'container-created', `f${i}.txt`))));
  const container = () =>
    inContainer(
      [
        `cd /app/${r}`,
        'echo deleted-restored $(ls container-deleted | grep -c "^f.*txt$")',
        'echo local-deleted $(ls local-deleted | wc -l)',
        'echo local-changed $(cat local-changed/*.txt | grep -c "laptop edit")',
        'echo local-renamed $(ls local-renamed | tr "\\n" " ")',
        'echo local-created $(ls local-created | wc -l)',
        'echo container-renamed $(ls container-renamed | wc -l)',
        'cd local-deleted-container-changed; echo local-deleted-container-changed $(ls | grep -c "^f.\\.txt$") $(ls | grep -c sync-conflict); cd ..',
        'echo link $(readlink link)',
        'echo empty-dir $(test -d empty-dir && echo yes)',
        'echo changed $(cat container-changed/f0.txt)',
      ].join('; '),
    );
  const expected = [
    `deleted-restored ${n}`,
    'local-deleted 0',
    `local-changed ${SMALL}`,
    `local-renamed ${[0, 1, 2, 3, 4].map((i) => `g${i}.txt`).join(' ')}`,
    `local-created ${SMALL}`,
    `container-renamed ${2 * SMALL}`,
    `local-deleted-container-changed 0 ${SMALL}`,
    'link target-a.txt',
    'empty-dir yes',
    `changed ${original('container-changed', 0).trim()}`,
  ].join('\n');
  await waitFor(`${r}: the container has this machine's versions`, async () => (await container()).trim() === expected, 300_000);
  // Settled before the next round, which would otherwise wait on this one's traffic.
  await waitFor(
    `${r}: sync settled`,
    () => runDevtool(['status', '-n', s.namespace], { env, cwd: folder }).stdout.trim() === 'Synchronization status: 100.00%',
    300_000,
  );
}

/**
 * `down` (keeping the volume) between two `up`s: the dev pod is gone, so nothing changes in the
 * container meanwhile; what the container changed while `up` was stopped before the `down` still
 * counts. Files deleted or renamed here while no `up` ran must not come back; the local index
 * tells them from files only the container has, which arrive here.
 */
async function downRound(r: string): Promise<void> {
  up ??= await startUp(['-n', s.namespace], { env, cwd: folder });
  const root = join(folder, r);
  writeFiles(join(root, 'deleted-here'), SMALL, (i) => `deleted here ${i}\n`);
  writeFiles(join(root, 'renamed-here'), SMALL, (i) => `renamed here ${i}\n`);
  writeFiles(join(root, 'deleted-here-changed-there'), SMALL, (i) => `original ${i}\n`);
  writeFileSync(join(root, 'zombie.txt'), 'zombie\n');
  await waitFor(
    `${r}: the files in the container`,
    async () => (await inContainer(`find /app/${r} -type f ! -name '.syncthing.*' 2>/dev/null | wc -l`)).trim() === String(3 * SMALL + 1),
    300_000,
  );
  await stopOrKill('stopped');
  await inContainer(
    [
      `cd /app/${r}`,
      'for f in deleted-here-changed-there/*.txt; do echo "container edit of $f" > "$f"; done',
      'mkdir -p created-there && for i in $(seq 0 4); do echo "container new $i" > created-there/f$i.txt; done',
    ].join(' && '),
  );
  const down = runDevtool(['down', '-n', s.namespace], { env, cwd: folder, timeoutMs: 180_000 });
  assert.equal(down.code, 0, `down:\n${down.stdout}${down.stderr}`);
  rmSync(join(root, 'zombie.txt'));
  for (let i = 0; i < SMALL; i++) {
    rmSync(join(root, 'deleted-here', `f${i}.txt`));
    renameSync(join(root, 'renamed-here', `f${i}.txt`), join(root, 'renamed-here', `g${i}.txt`));
    rmSync(join(root, 'deleted-here-changed-there', `f${i}.txt`));
  }

  const logFrom = devtoolLog().length;
  up = await startUp(['-n', s.namespace], { env, cwd: folder });
  const names = (dir: string) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter((n) => !n.startsWith('.syncthing.'))
          .sort()
      : [];
  const renamed = [0, 1, 2, 3, 4].map((i) => `g${i}.txt`);
  await waitFor(
    `${r}: sync settled`,
    () => runDevtool(['status', '-n', s.namespace], { env, cwd: folder }).stdout.trim() === 'Synchronization status: 100.00%',
    300_000,
  );
  // Both ends have exchanged everything: nothing deleted or renamed here came back.
  assert.ok(!existsSync(join(root, 'zombie.txt')), 'a file deleted here stays deleted');
  assert.deepEqual(names('deleted-here'), [], 'files deleted here stay deleted');
  assert.deepEqual(names('renamed-here'), renamed, 'a file renamed here keeps only its new name');
  assert.deepEqual(
    names('created-there'),
    [0, 1, 2, 3, 4].map((i) => `f${i}.txt`),
    'what only the container has arrives',
  );
  await waitFor(
    `${r}: the container's versions of the files deleted here, as conflict copies`,
    () => conflictCopies(join(root, 'deleted-here-changed-there')).length === SMALL,
  );
  assert.deepEqual(
    names('deleted-here-changed-there').filter((n) => !n.includes('.sync-conflict-')),
    [],
    'a file deleted here stays deleted; the container keeps its edit as a conflict copy',
  );
  for (const copy of conflictCopies(join(root, 'deleted-here-changed-there')))
    assert.match(readFileSync(join(root, 'deleted-here-changed-there', copy), 'utf8'), /^container edit of deleted-here-changed-there\/f\d\.txt\n$/);
  const inContainerNow = () =>
    inContainer(
      [
        `cd /app/${r}`,
        'echo zombie $(ls | grep -c "^zombie")',
        'echo deleted-here $(ls deleted-here | wc -l)',
        'echo renamed-here $(ls renamed-here | tr "\\n" " ")',
        'echo changed-there $(ls deleted-here-changed-there | grep -c "^f.\\.txt$") $(ls deleted-here-changed-there | grep -c "sync-conflict")',
      ].join('; '),
    );
  const expected = ['zombie 0', 'deleted-here 0', `renamed-here ${renamed.join(' ')}`, `changed-there 0 ${SMALL}`].join('\n');
  await waitFor(`${r}: the container has this machine's deletions and renames`, async () => (await inContainerNow()).trim() === expected, 120_000);
  const log = devtoolLog().subarray(logFrom).toString('utf8');
  assert.doesNotMatch(log, /only the container has arrive here: [^\n]*(zombie|deleted-here|renamed-here)/, "nothing deleted here is taken for the container's");
}
