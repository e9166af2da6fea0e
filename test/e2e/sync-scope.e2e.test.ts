/**
 * What `up` synchronizes: only folders of the project, a `:ro` folder sent only,
 * and nothing of the home directory unless asked for. The refusals need no cluster (`up` stops at
 * the manifest); what a running `up` says and syncs is checked on the local cluster.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createSandbox, lines, runDevtool, type Sandbox } from './cli.ts';
import { clusterSandbox, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';
import { startUp, tearDownDev, type UpSession } from './up-session.ts';

/** A HOME holding what a developer's does: an SSH key and cloud credentials. */
function homeWithSecrets(sandbox: Sandbox): void {
  mkdirSync(join(sandbox.home, '.ssh'));
  writeFileSync(join(sandbox.home, '.ssh/id_ed25519'), 'PRIVATE KEY\n');
  writeFileSync(join(sandbox.home, '.ssh/authorized_keys'), 'ssh-ed25519 AAAA me\n');
  mkdirSync(join(sandbox.home, '.aws'));
  writeFileSync(join(sandbox.home, '.aws/credentials'), '[default]\naws_secret_access_key = SECRET\n');
  mkdirSync(join(sandbox.root, 'outside'));
}

test('up refuses host folders outside the project before it contacts anything', () => {
  const sandbox = createSandbox();
  homeWithSecrets(sandbox);
  const app = join(sandbox.root, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'compose.yaml'),
    'services:\n  api:\n    image: node\n    volumes: ["~/.ssh:/root/.ssh:ro", "~/.aws:/root/.aws:ro", "../outside:/data"]\n',
  );
  const r = runDevtool(['up'], { env: sandbox.env, cwd: app });
  assert.equal(r.code, 1, r.stderr);
  const optIn = 'to synchronize it anyway, give api a services entry in devtool.yml with syncOutsideProject: true (docs/manifest.md#services)';
  assert.deepEqual(lines(r.stderr), [
    `warn: service api: ~/.ssh (-> /root/.ssh) is not synchronized: it is outside the project (${app}); ${optIn}`,
    `warn: service api: ~/.aws (-> /root/.aws) is not synchronized: it is outside the project (${app}); ${optIn}`,
    `warn: service api: ${join(sandbox.root, 'outside')} (-> /data) is not synchronized: it is outside the project (${app}); ${optIn}`,
    `Error: compose.yaml: no service mounts a folder of the project that up can synchronize (the warnings above say why): mount one (e.g. volumes: ` +
      `['./src:/app/src']), or write a devtool.yml with a services entry, e.g. "services: {api: {sync: ['.:/app']}}" where api is the Deployment ` +
      `to develop`,
  ]);
  assert.ok(!existsSync(join(sandbox.devtoolHome, 'dev')), 'no dev state was made');

  // The same folders in a manifest: a located error, and the opt-in does not open the home directory.
  symlinkSync(sandbox.home, join(app, 'home-link'));
  const manifest = (yaml: string) => {
    writeFileSync(join(app, 'devtool.yml'), yaml);
    const m = runDevtool(['up'], { env: sandbox.env, cwd: app });
    assert.equal(m.code, 1, m.stderr);
    return m.stderr.trim();
  };
  assert.equal(
    manifest('services:\n  api:\n    sync: [".:/app", "../outside:/data"]\n'),
    `Error: devtool.yml:3:22: field services.api.sync[1]: ../outside is outside the project (${app}): set services.api.syncOutsideProject: true to ` +
      `synchronize it anyway (docs/manifest.md#services)`,
  );
  assert.equal(
    manifest('services:\n  api:\n    syncOutsideProject: true\n    sync: ["./home-link:/root"]\n'),
    `Error: devtool.yml:4:12: field services.api.sync[0]: ./home-link (which resolves to ${sandbox.home}) is the home directory, which is never ` +
      `synchronized (it holds SSH keys and cloud credentials)`,
  );
  assert.equal(
    manifest('services:\n  api:\n    syncOutsideProject: true\n    sync: ["/:/host"]\n'),
    'Error: devtool.yml:4:12: field services.api.sync[0]: / is the root of the file system, which is never synchronized',
  );
});

let s: ClusterSandbox | undefined;
let env: NodeJS.ProcessEnv;
const folders: string[] = [];
after(() => (s ? tearDownDev(s, env, folders) : undefined));

/** A Compose app mounting a folder of its own, a `:ro` one, the SSH folder of HOME and a sibling folder. */
async function composeApp(): Promise<{ app: string; up: UpSession }> {
  s = await clusterSandbox('sync-scope');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  homeWithSecrets(s);
  const app = join(s.root, 'app');
  mkdirSync(join(app, 'src'), { recursive: true });
  mkdirSync(join(app, 'config'));
  writeFileSync(join(app, 'src/index.txt'), 'local source\n');
  writeFileSync(join(app, 'config/app.conf'), 'setting = local\n');
  writeFileSync(
    join(app, 'compose.yaml'),
    `services:\n  api:\n    image: ${REGISTRY}/debian:bookworm\n    command: [sleep, infinity]\n` +
      `    volumes: ["./src:/app/src", "./config:/etc/app:ro", "~/.ssh:/root/.ssh:ro", "../outside:/outside"]\n`,
  );
  folders.push(app);
  return { app, up: await startUp(['-n', s.namespace], { env, cwd: app }, 300_000) };
}

const exec = (app: string, script: string) => runDevtool(['exec', '-n', s!.namespace, '--', 'sh', '-c', script], { env, cwd: app, timeoutMs: 60_000 });

async function waitFor(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let running: { app: string; up: UpSession } | undefined;

test('up says what it syncs: project folders both ways or sent only, the home folder and a sibling not at all', { timeout: 600_000 }, async () => {
  running = await composeApp();
  const { app, up } = running;
  const said = lines(up.output());
  const outside =
    `is not synchronized: it is outside the project (${app}); to synchronize it anyway, give api a services entry in devtool.yml ` +
    `with syncOutsideProject: true (docs/manifest.md#services)`;
  for (const line of [
    '• sync ./src <-> /app/src (both ways)',
    '• sync ./config -> /etc/app (sent only)',
    `! ~/.ssh (-> /root/.ssh) ${outside}`,
    `! ${join(s!.root, 'outside')} (-> /outside) ${outside}`,
  ]) {
    assert.ok(said.includes(line), `up says ${JSON.stringify(line)}:\n${up.output()}`);
  }
  assert.match(up.stdout(), new RegExp(`sync +${join(app, 'config')} -> /etc/app\n`));
  assert.equal(exec(app, 'cat /app/src/index.txt /etc/app/app.conf').stdout, 'local source\nsetting = local\n', 'both project folders reach the container');
  const ssh = exec(app, 'ls -A /root/.ssh /outside 2>&1; true').stdout;
  assert.doesNotMatch(ssh, /id_ed25519|authorized_keys/, 'the SSH folder never reaches the container');
});

test('a :ro folder is sent only: what the container writes there stays there', { timeout: 300_000 }, async () => {
  assert.ok(running, 'the previous test started up');
  const { app } = running;
  assert.equal(
    exec(
      app,
      'echo from the container > /app/src/made-there.txt && echo from the container > /etc/app/made-there.txt && echo "setting = container" > ' +
        '/etc/app/app.conf',
    ).code,
    0,
  );
  await waitFor('the two-way folder brings the container file back', () => existsSync(join(app, 'src/made-there.txt')));
  // The two-way file came back, so the send-only one would have too: give it as long again.
  await new Promise((r) => setTimeout(r, 5_000));
  assert.deepEqual(readdirSync(join(app, 'config')), ['app.conf'], 'nothing the container made in the :ro folder');
  assert.equal(readFileSync(join(app, 'config/app.conf'), 'utf8'), 'setting = local\n', 'nor what it changed there');
  // And the laptop's changes still go: a local edit reaches the container.
  writeFileSync(join(app, 'config/new.conf'), 'added here\n');
  await waitFor('a local file in the :ro folder reaches the container', () => exec(app, 'cat /etc/app/new.conf 2>/dev/null').stdout === 'added here\n');
  await running.up.stop();
});
