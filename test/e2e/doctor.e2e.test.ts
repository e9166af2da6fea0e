/**
 * `doctor` on the local cluster: with a dev container up (file sync on, so the agent runs
 * Syncthing), the zip holds devtool.log, the agent's remote logs, the pod state, the manifest
 * summary and the metadata, and none of the secrets: the agent Secret's Syncthing password, API
 * key and SSH host key, a secret-named environment value of the manifest, a bearer token, a
 * `KEY=VALUE` passed to `exec` (which devtool.log never held). Ordinary words stay ("first pass:
 * local files"). The zip goes to the devtool home, never the (synced) project folder. Without an
 * active dev container, and with a cluster that does not answer, it still writes what it can.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { strFromU8, unzipSync } from 'fflate';
import { createSandbox, lines, runDevtool } from './cli.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';

const API_TOKEN = `tok-${Math.random().toString(36).slice(2)}-e2e`;
const BEARER = `bearer${Math.random().toString(36).slice(2)}XYZ`;
const EXEC_TOKEN = `exec-${Math.random().toString(36).slice(2)}-e2e`;
const ORDINARY = 'ordinary-probe first pass: local files kept; the token expired; Bearer authentication required at localhost:5000';

let s: ClusterSandbox;
let folder: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  s = await clusterSandbox('doctor');
  await createSleepingDeployment(s, 'web');
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), `services:\n  web:\n    sync: [".:/app"]\n    environment:\n      API_TOKEN: ${API_TOKEN}\n      MODE: dev\n`);
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, [folder]));

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });

/** metadata.json in the doctor zip, the fields these tests read (src/doctor/doctor.ts writes it). */
interface DoctorMetadata {
  devtool: { version: string };
  node: string;
  os: { platform: string; arch: string };
  context: string | null;
  namespace: string | null;
  devContainers: { web: { state: string } };
  notCollected: string[];
}

/**
 * Runs doctor in `cwd`, checks it printed one zip path, in the devtool home's doctor folder and not
 * in `cwd` (a synced folder would carry it into the dev container), and returns the zip's entries.
 */
function doctor(cwd: string, runEnv: NodeJS.ProcessEnv, args: string[] = []): { entries: Record<string, string>; stderr: string } {
  const r = runDevtool(['doctor', ...args], { env: runEnv, cwd, timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const [path] = lines(r.stdout);
  assert.match(path!, new RegExp(`^${runEnv.DEVTOOL_HOME}/doctor/devtool-doctor-\\d{8}-\\d{6}\\.zip$`));
  assert.ok(r.stderr.includes(path!), `the path is in the output: ${r.stderr}`);
  assert.equal(statSync(dirname(path!)).mode & 0o777, 0o700);
  assert.deepEqual(
    readdirSync(cwd).filter((f) => f.startsWith('devtool-doctor-')),
    [],
    'nothing written to the current folder',
  );
  const zip = unzipSync(readFileSync(path!));
  return { entries: Object.fromEntries(Object.entries(zip).map(([name, data]) => [name, strFromU8(data)])), stderr: r.stderr };
}

test('doctor with an active dev container: logs from both ends, metadata, manifest summary, no secret', { timeout: 480_000 }, async () => {
  await startUp(['-n', s.namespace], { env, cwd: folder });
  // The agent configuration as the cluster holds it: the secrets that must not leak.
  const secret = await s.core.readNamespacedSecret({ name: 'web-devtool', namespace: s.namespace });
  const agentConfig = JSON.parse(Buffer.from(secret.data!['agent.json']!, 'base64').toString('utf8')) as {
    ssh: { hostKey: string };
    syncthing: { apiKey: string; guiPassword: string };
  };
  const { apiKey, guiPassword } = agentConfig.syncthing;
  assert.ok(apiKey && guiPassword, 'file sync is on: the contract has Syncthing credentials');
  const hostKeyLine = agentConfig.ssh.hostKey.split('\n')[1]!;

  // Secrets where a careless tool would leak them: a log line in the container, written by a
  // process that knows them, and the CLI's own log.
  const probe = dev([
    'exec',
    '--',
    'sh',
    '-c',
    `echo "probe-start token=$API_TOKEN raw ${guiPassword} X-API-Key: ${apiKey} probe-end" > /var/devtool/logs/probe.log`,
  ]);
  assert.equal(probe.code, 0, probe.stderr);
  const withEnv = dev(['exec', '--', 'env', `TOKEN=${EXEC_TOKEN}`, 'MODE=local', 'true']);
  assert.equal(withEnv.code, 0, withEnv.stderr);
  const log = readFileSync(join(s.devtoolHome, 'devtool.log'), 'utf8');
  assert.ok(!log.includes(EXEC_TOKEN), 'an exec KEY=VALUE is not in devtool.log');
  assert.match(log, / -- env TOKEN=\*\*\* MODE=\*\*\* true$/m);
  appendFileSync(join(s.devtoolHome, 'devtool.log'), `local-probe Authorization: Bearer ${BEARER} value ${API_TOKEN}\n${ORDINARY}\n`);
  // The dev container's local state folder: doctor takes its *.log files (the local Syncthing's).
  const [stateDir] = readdirSync(join(s.devtoolHome, 'dev'));
  appendFileSync(join(s.devtoolHome, 'dev', stateDir!, 'syncthing.log'), `local-sync-probe GUI password ${guiPassword}\n`);

  const { entries, stderr } = doctor(folder, env, ['-n', s.namespace]);
  const names = Object.keys(entries).sort();
  for (const want of [
    'metadata.json',
    'manifest-summary.yml',
    'devtool.log',
    'remote/web/supervisor.log',
    'remote/web/ssh.log',
    'remote/web/syncthing.log',
    'remote/web/probe.log',
    'remote/web/pod.json',
    'remote/web/container.log',
    'local/web/syncthing.log',
  ]) {
    assert.ok(names.includes(want), `${want} in ${names.join(', ')}`);
  }
  assert.match(stderr, /✓ doctor file written with \d+ files, secrets redacted/);

  const meta = JSON.parse(entries['metadata.json']!) as DoctorMetadata;
  assert.deepEqual({ platform: meta.os.platform, arch: meta.os.arch }, { platform: platform(), arch: arch() });
  assert.equal(meta.devtool.version, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
  assert.equal(meta.node, process.version);
  assert.equal(meta.namespace, s.namespace);
  assert.equal(meta.context, 'devtool-local');
  assert.equal(meta.devContainers.web.state, 'active');
  assert.deepEqual(meta.notCollected, []);

  assert.match(entries['manifest-summary.yml']!, /API_TOKEN: REDACTED/);
  assert.match(entries['manifest-summary.yml']!, /MODE: dev/);
  assert.match(entries['manifest-summary.yml']!, /remote: \/app/);
  // The remote log really went through, redacted: its non-secret words are there.
  assert.match(entries['remote/web/probe.log']!, /^probe-start token=REDACTED raw REDACTED X-API-Key: REDACTED probe-end$/m);
  assert.match(entries['remote/web/supervisor.log']!, /syncthing/i);
  assert.match(entries['devtool.log']!, /local-probe Authorization: Bearer REDACTED value REDACTED/);
  // Ordinary words are not taken for secrets.
  assert.ok(entries['devtool.log']!.includes(ORDINARY), entries['devtool.log']);
  assert.match(entries['devtool.log']!, / -- env TOKEN=\*\*\* MODE=\*\*\* true$/m);
  assert.match(entries['local/web/syncthing.log']!, /local-sync-probe GUI password REDACTED/);
  // Syncthing's own output (it writes no log file of its own without its monitor process).
  assert.match(entries['local/web/syncthing.log']!, /INFO: My ID: [A-Z0-9-]{63}/);
  assert.equal(JSON.parse(entries['remote/web/pod.json']!).phase, 'Running');

  for (const [name, text] of Object.entries(entries)) {
    for (const [what, value] of [
      ['API_TOKEN', API_TOKEN],
      ['Syncthing password', guiPassword],
      ['Syncthing API key', apiKey],
      ['SSH host key', hostKeyLine],
      ['bearer token', BEARER],
      ['exec TOKEN', EXEC_TOKEN],
    ] as const) {
      assert.ok(!text.includes(value), `${what} leaked in ${name}`);
    }
  }
});

test('doctor with nothing active still writes the local part and says what it could not collect', { timeout: 180_000 }, async () => {
  const down = dev(['down', '--volumes'], 120_000);
  assert.equal(down.code, 0, down.stderr);
  const { entries, stderr } = doctor(folder, env, ['web', '-n', s.namespace]);
  assert.deepEqual(
    Object.keys(entries).filter((n) => n.startsWith('remote/')),
    [],
  );
  assert.ok(entries['devtool.log'] && entries['manifest-summary.yml']);
  const meta = JSON.parse(entries['metadata.json']!) as DoctorMetadata;
  assert.equal(meta.devContainers.web.state, 'not active');
  assert.match(meta.notCollected.join('\n'), new RegExp(`web: no remote logs: no dev container is active in namespace ${s.namespace}`));
  assert.match(stderr, /! not collected: web: no remote logs: no dev container is active/);
});

test('doctor with a cluster that does not answer, and with no manifest, still writes a zip', { timeout: 120_000 }, () => {
  const unreachable = createSandbox(`apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: "kubeconfig-token-should-not-leak"}}]
contexts: [{name: gone, context: {cluster: gone, user: u, namespace: ns1}}]
current-context: gone
`);
  const project = join(unreachable.root, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'devtool.yml'), 'services:\n  api: {}\n');
  mkdirSync(unreachable.devtoolHome, { recursive: true });
  writeFileSync(join(unreachable.devtoolHome, 'devtool.log'), 'used token kubeconfig-token-should-not-leak once\n', { flag: 'a' });
  const { entries } = doctor(project, unreachable.env);
  const meta = JSON.parse(entries['metadata.json']!) as DoctorMetadata;
  assert.equal(meta.context, 'gone');
  assert.equal(meta.namespace, 'ns1');
  assert.match(
    meta.notCollected.join('\n'),
    /api: no remote logs from the cluster of context gone: cannot reach the Kubernetes API server https:\/\/127\.0\.0\.1:9 \(connection refused\)/,
  );
  assert.ok(!entries['devtool.log']!.includes('kubeconfig-token-should-not-leak'), 'the kubeconfig token is redacted');

  rmSync(join(project, 'devtool.yml'));
  const bare = doctor(project, unreachable.env);
  assert.deepEqual(Object.keys(bare.entries).sort(), ['devtool.log', 'metadata.json']);
  assert.match(JSON.parse(bare.entries['metadata.json']!).notCollected.join('\n'), /no manifest devtool.yml in /);
});
