/**
 * A dev container that attacks this machine through sync (docs/sync.md, "What the container cannot
 * plant here"). Code in the container can read its own Syncthing's API key, so it turns off every
 * guard its end has: it drops the ignore patterns, sets `ignorePerms` false, then plants a
 * `core.fsmonitor` line and an executable hook in `.git`, makes files executable, and places a
 * chain of links whose spelling stays inside the folder but which leads to /etc. This machine,
 * the trusted end, takes none of it: no `.git` content arrives (and its own `.git` is not sent),
 * `git status` here runs nothing planted (nor in a folder the container laid out as a bare
 * repository), no execute bit comes over, and the escaping link does not exist here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';

let s: ClusterSandbox;
let folder: string;
let env: NodeJS.ProcessEnv;

/** git here, with no configuration of the machine's or the developer's. */
function git(args: string[]) {
  const r = spawnSync('git', args, {
    cwd: folder,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: s.root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com',
    },
  });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  s = await clusterSandbox('dev-attacks');
  await createSleepingDeployment(s, 'api');
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  writeFileSync(join(folder, 'data.txt'), 'data\n');
  chmodSync(join(folder, 'data.txt'), 0o644);
  git(['init', '-q']);
  git(['add', '.']);
  git(['commit', '-q', '-m', 'start']);
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, [folder]));

const inContainer = (script: string, timeoutMs = 60_000) =>
  runDevtool(['exec', '-n', s.namespace, '--', 'bash', '-c', script], { env, cwd: folder, timeoutMs });

/**
 * bash in the container calling its Syncthing's REST API with the key the agent's configuration holds
 * (mounted readable by the workload): `api METHOD PATH BODY`. No curl in the image: /dev/tcp.
 */
const API = String.raw`
KEY=$(grep -o '"apiKey": *"[^"]*"' /etc/devtool/agent.json | head -n1 | sed 's/.*"\([^"]*\)"$/\1/')
FOLDER=$(grep -o '"id": *"devtool-[^"]*"' /etc/devtool/agent.json | head -n1 | sed 's/.*"\([^"]*\)"$/\1/')
api() {
  exec 3<>/dev/tcp/127.0.0.1/8384
  local head='%s %s HTTP/1.0\r\nHost: 127.0.0.1:8384\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n'
  printf "$head%s" "$1" "$2" "$KEY" "$(printf %s "$3" | wc -c)" "$3" >&3
  head -n1 <&3
  exec 3<&-
}
`;

test('a dev container that turns off its own guards plants nothing that runs here', { timeout: 600_000 }, async () => {
  const up = await startUp(['-n', s.namespace], { env, cwd: folder });
  await waitFor('first sync settled', () => /first sync settled in/.test(up.output()), 60_000);
  assert.equal(inContainer('cat /app/data.txt').stdout, 'data\n');

  // The attacker's first move: its end ignores nothing and sends permission bits.
  const off = inContainer(`${API}
    [ -n "$KEY" ] && [ -n "$FOLDER" ] || { echo "no key or folder in the contract" >&2; exit 1; }
    api PATCH "/rest/config/folders/$FOLDER" '{"ignorePerms": false}'
    api POST "/rest/db/ignores?folder=$FOLDER" '{"ignore": []}'
    api POST "/rest/db/scan?folder=$FOLDER" ''`);
  assert.equal(off.code, 0, off.stderr);
  assert.equal(off.stdout.match(/HTTP\/1\.[01] 200/g)?.length, 3, `the container's Syncthing took every change: ${off.stdout}`);

  // With its ignores gone the container would take this machine's .git; it is not sent.
  const gitThere = async () => inContainer('test -e /app/.git/config').code === 0;
  await waitFor('(the laptop .git in the container)', gitThere, 15_000).catch(() => undefined);
  const laptopGitSent = await gitThere();

  const pwnedByFsmonitor = join(s.root, 'pwned-fsmonitor');
  const pwnedByHook = join(s.root, 'pwned-hook');
  const pwnedByBareRepo = join(s.root, 'pwned-bare');
  // Links: `lnk/b -> ..` leads to the folder itself, so DEPTH of them and DEPTH `..` climb to /
  // while the spelling stays inside the folder. `esc` arrives first, `lnk/b` after it.
  const depth = realpathSync(folder).split('/').length - 1;
  const chain = `${'lnk/b/'.repeat(depth)}${'../'.repeat(depth)}etc`;
  const plant = inContainer(`set -e
    mkdir -p /app/.git/hooks
    printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = "touch ${pwnedByFsmonitor}; true"\\n' > /app/.git/config
    printf '#!/bin/sh\\ntouch ${pwnedByHook}\\n' > /app/.git/hooks/pre-commit
    chmod 755 /app/.git/hooks/pre-commit
    mkdir -p /app/sub/objects /app/sub/refs
    printf 'ref: refs/heads/main\n' > /app/sub/HEAD
    printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch ${pwnedByBareRepo}; true"\n' > /app/sub/config
    printf '#!/bin/sh\\necho planted\\n' > /app/planted.sh
    chmod 755 /app/planted.sh
    chmod +x /app/data.txt
    ln -s '${chain}' /app/esc
    sleep 3
    mkdir -p /app/lnk && ln -s .. /app/lnk/b
    sleep 3
    echo done > /app/after-attack.txt`);
  assert.equal(plant.code, 0, plant.stderr);
  assert.equal(inContainer('ls /app/esc/passwd >/dev/null && echo reaches-etc').stdout.trim(), 'reaches-etc', 'in the container the chain leads to /etc');

  await waitFor('after-attack.txt here', () => existsSync(join(folder, 'after-attack.txt')), 60_000);
  await waitFor('planted.sh here', () => existsSync(join(folder, 'planted.sh')), 30_000);
  await waitFor('lnk/b here', () => lstatSync(join(folder, 'lnk/b'), { throwIfNoEntry: false })?.isSymbolicLink() === true, 30_000);
  // Syncthing's own batching (the attack landed 8 s after the write): time for anything
  // still on its way to land, then the folder at rest.
  await new Promise((r) => setTimeout(r, 10_000));
  await waitFor(
    'status 100.00%',
    () => runDevtool(['status', '-n', s.namespace], { env, cwd: folder }).stdout.trim() === 'Synchronization status: 100.00%',
    60_000,
  ).catch(() => undefined);

  // Every guard is checked, and every one that failed is named.
  const broken: string[] = [];
  const check = (claim: string, holds: boolean) => void (holds || broken.push(claim));

  // No .git content from the container, and this machine's .git went nowhere.
  check("this machine's .git stays here", !laptopGitSent);
  check('the planted .git/config does not arrive', !/fsmonitor/.test(readFileSync(join(folder, '.git/config'), 'utf8')));
  check('the planted hook does not arrive', !existsSync(join(folder, '.git/hooks/pre-commit')));
  git(['status', '--porcelain']);
  check('git status here runs no planted core.fsmonitor', !existsSync(pwnedByFsmonitor));
  check('no planted hook ran', !existsSync(pwnedByHook));
  // A folder holding HEAD, objects and refs is a bare repository to git, which takes it before the
  // repository above: its config, fsmonitor included, would run for a git command in sub/.
  await waitFor('sub/config here', () => existsSync(join(folder, 'sub/config')), 30_000);
  check('the HEAD of a planted bare repository does not arrive', !existsSync(join(folder, 'sub/HEAD')));
  spawnSync('git', ['status'], { cwd: join(folder, 'sub'), env: { PATH: process.env.PATH, HOME: s.root, GIT_CONFIG_NOSYSTEM: '1' } });
  check("git status in sub/ runs no planted bare repository's core.fsmonitor", !existsSync(pwnedByBareRepo));

  // No execute bit set by the container.
  check('a file made 0755 there arrives without execute bits', (statSync(join(folder, 'planted.sh')).mode & 0o111) === 0);
  check('a chmod +x there changes nothing here', (statSync(join(folder, 'data.txt')).mode & 0o777) === 0o644);

  // The chain: lnk/b (inside) stays, esc (to /etc here) does not exist here.
  check('lnk/b -> .. (inside the folder) stays', readlinkSync(join(folder, 'lnk/b')) === '..');
  check(`esc -> ${chain} does not exist here`, lstatSync(join(folder, 'esc'), { throwIfNoEntry: false }) === undefined);
  check('up says it refused esc', /made the link esc -> .* which leads out of the folder/.test(up.output()));
  assert.deepEqual(broken, []);
  await up.stop();
});
