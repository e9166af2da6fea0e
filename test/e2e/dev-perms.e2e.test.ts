/**
 * Permission bits between this machine and a dev container (docs/sync.md, "Permission bits: the
 * laptop decides"): the first copy keeps modes; a file made executable here arrives executable;
 * a file made executable in the container arrives here without its exec bits, and a `chmod +x`
 * there changes nothing here; a script of this machine's edited there keeps its bits here, and a
 * `chmod +x` here of a file the container wrote reaches the container.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';

let s: ClusterSandbox;
let folder: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  s = await clusterSandbox('dev-perms');
  await createSleepingDeployment(s, 'api');
  folder = join(s.root, 'project');
  mkdirSync(join(folder, 'bin'), { recursive: true });
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  writeFileSync(join(folder, 'bin/run.sh'), '#!/bin/sh\necho run\n');
  chmodSync(join(folder, 'bin/run.sh'), 0o755);
  writeFileSync(join(folder, 'tool.sh'), 'echo tool\n');
  writeFileSync(join(folder, 'data.txt'), 'data\n');
  chmodSync(join(folder, 'tool.sh'), 0o644);
  chmodSync(join(folder, 'data.txt'), 0o644);
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, [folder]));

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
const inContainer = (script: string) => dev(['exec', '--', 'sh', '-c', script]);
const modeInContainer = (path: string) => inContainer(`stat -c %a ${path} 2>/dev/null`).stdout.trim();
const modeHere = (rel: string) => (statSync(join(folder, rel)).mode & 0o7777).toString(8);

test('permission bits: the laptop decides', { timeout: 600_000 }, async () => {
  const up = await startUp(['-n', s.namespace], { env, cwd: folder });
  await waitFor('first sync settled', () => /first sync settled in/.test(up.output()), 60_000);
  assert.equal(modeInContainer('/app/bin/run.sh'), '755', 'the first copy keeps modes');
  assert.equal(modeInContainer('/app/tool.sh'), '644');

  // Made executable here: arrives executable (the container's Syncthing ignores bits; the agent
  // applies this machine's).
  writeFileSync(join(folder, 'new.sh'), '#!/bin/sh\necho new\n');
  chmodSync(join(folder, 'new.sh'), 0o755);
  await waitFor('new.sh 755 in the container', () => modeInContainer('/app/new.sh') === '755');
  chmodSync(join(folder, 'tool.sh'), 0o755);
  await waitFor('chmod +x of tool.sh in the container', () => modeInContainer('/app/tool.sh') === '755');

  // Made executable in the container: arrives here without exec bits.
  assert.equal(inContainer('mkdir -p /app/hooks && printf "#!/bin/sh\\nid\\n" > /app/hooks/pre-commit && chmod 755 /app/hooks/pre-commit').code, 0);
  await waitFor('pre-commit here', () => readIfThere(join(folder, 'hooks/pre-commit')) === '#!/bin/sh\nid\n');
  assert.equal(statSync(join(folder, 'hooks/pre-commit')).mode & 0o111, 0, `pre-commit arrived as ${modeHere('hooks/pre-commit')}`);

  // chmod +x in the container of a file from here: nothing changes here. A file written after it
  // in the container arrives here, so the chmod had its chance to follow.
  assert.equal(inContainer('chmod +x /app/data.txt && echo after > /app/after.txt').code, 0);
  await waitFor('after.txt here', () => existsSync(join(folder, 'after.txt')));
  await waitFor('status 100.00%', () => dev(['status']).stdout.trim() === 'Synchronization status: 100.00%');
  assert.equal(modeHere('data.txt'), '644');
  assert.equal(modeInContainer('/app/data.txt'), '755', 'the container keeps its own bits; they are only not sent');

  // A script of this machine's edited in the container (a formatter there): its content comes
  // here, its execute bits stay (the replaced version's, from the environment's trash).
  assert.equal(inContainer('printf "#!/bin/sh\\necho formatted\\n" > /app/bin/run.sh').code, 0);
  // Read only when there: Syncthing moves the replaced version to the trash an instant before it
  // renames the new one into place (seen once in CI as ENOENT here).
  await waitFor('the edit of run.sh here', () => readIfThere(join(folder, 'bin/run.sh')) === '#!/bin/sh\necho formatted\n');
  await waitFor('run.sh still executable here', () => modeHere('bin/run.sh') === '755', 10_000);
  // The replaced version is in the environment's trash (<home>/dev/<key>/trash/<folder id>/...).
  const [key] = readdirSync(join(env.DEVTOOL_HOME!, 'dev'));
  const [folderId] = readdirSync(join(env.DEVTOOL_HOME!, 'dev', key!, 'trash'));
  assert.equal(readFileSync(join(env.DEVTOOL_HOME!, 'dev', key!, 'trash', folderId!, 'bin/run.sh'), 'utf8'), '#!/bin/sh\necho run\n');

  // chmod +x here of a file the container wrote last (its entry has no bits): reaches the container.
  chmodSync(join(folder, 'after.txt'), 0o755);
  await waitFor('chmod +x of after.txt in the container', () => modeInContainer('/app/after.txt') === '755');
  await up.stop();
});

/** A file's text, or undefined while it is not there (between a move to the trash and the rename of its new version). */
function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
