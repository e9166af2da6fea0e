/**
 * The session state `up` publishes on its dev Deployment (api/dev-session.ts), read as the
 * service's dashboard reads it: the annotation decoded, nothing else trusted. A Deployment, a
 * devtool.yml syncing the project folder with one forward, `up` running without a terminal.
 */
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DEV_SESSION_ANNOTATION, DEV_SESSION_HEARTBEAT_MS, type DevSessionState, decodeDevSession } from '../../api/dev-session.ts';
import { runDevtool } from './cli.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, type ClusterSandbox } from './cluster.ts';
import { startUp, tearDownDev } from './up-session.ts';

const FORWARD = 31000 + Math.floor(Math.random() * 1000);
const MIRROR = 'sess-api-devtool';

let s: ClusterSandbox;
let apps: k8s.AppsV1Api;
let folder: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  s = await clusterSandbox('sess-state');
  apps = s.kc.makeApiClient(k8s.AppsV1Api);
  await createSleepingDeployment(s, 'sess-api');
  folder = join(s.root, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'devtool.yml'), `services:\n  sess-api:\n    sync: [".:/app"]\n    forward: ["${FORWARD}:8080"]\n`);
  writeFileSync(join(folder, 'main.txt'), 'hello\n');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
});

after(() => tearDownDev(s, env, [folder]));

const dev = ([cmd, ...args]: string[], timeoutMs = 60_000) => runDevtool([cmd!, '-n', s.namespace, ...args], { env, cwd: folder, timeoutMs });
const inContainer = (script: string) => dev(['exec', '--', 'sh', '-c', script]);

/** The session annotation of the dev Deployment, decoded as a reader does: undefined when absent or malformed. */
async function published(): Promise<DevSessionState | undefined> {
  const d = await apps.readNamespacedDeployment({ name: MIRROR, namespace: s.namespace }).catch(() => undefined);
  return decodeDevSession(d?.metadata?.annotations?.[DEV_SESSION_ANNOTATION]);
}

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, ok: (x: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (last !== undefined && ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s; last seen ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

test('sess: up publishes its state, a conflict copy, its heartbeat, its end; down leaves no session', { timeout: 600_000 }, async () => {
  const first = await startUp(['-n', s.namespace], { env, cwd: folder });
  const ready = await waitFor('the session published, sync watching', published, (x) => x.sync.state === 'watching');
  assert.equal(ready.user, userInfo().username);
  assert.match(ready.version, /^\d+\.\d+\.\d+/);
  assert.deepEqual(ready.forwards, [{ local: FORWARD, remote: `sess-api:8080` }]);
  assert.deepEqual(ready.connection, { state: 'connected' });
  assert.deepEqual(ready.conflicts, { total: 0, latest: [] });
  assert.equal(ready.endedAt, undefined);
  assert.ok(Date.parse(ready.startedAt) <= Date.parse(ready.heartbeatAt));

  // The heartbeat goes on while nothing changes.
  const beat = await waitFor(
    'a later heartbeat',
    published,
    (x) => Date.parse(x.heartbeatAt) > Date.parse(ready.heartbeatAt),
    DEV_SESSION_HEARTBEAT_MS + 30_000,
  );
  assert.equal(beat.startedAt, ready.startedAt);
  assert.equal(beat.endedAt, undefined);

  // Up's exit (SIGTERM, as Ctrl-C): the dev container stays, its session is marked ended.
  await first.stop();
  const ended = await published();
  assert.ok(ended?.endedAt, `ended: ${JSON.stringify(ended)}`);

  // The file changed in the container while no up ran, and locally too: the next up keeps the
  // local content and the container's as a conflict copy, which its session lists.
  assert.equal(inContainer('echo container-edit > /app/main.txt').code, 0);
  await new Promise((r) => setTimeout(r, 1500));
  writeFileSync(join(folder, 'main.txt'), 'laptop-edit\n');
  const again = await startUp(['-n', s.namespace], { env, cwd: folder });
  const copy = await waitFor(
    'the conflict copy locally',
    async () => readdirSync(folder).find((n) => n.startsWith('main.sync-conflict-')),
    () => true,
  );
  assert.equal(readFileSync(join(folder, copy), 'utf8'), 'container-edit\n');
  const withConflict = await waitFor('the conflict copy published', published, (x) => x.conflicts.total > 0 && x.endedAt === undefined);
  assert.ok(Date.parse(withConflict.startedAt) > Date.parse(ready.startedAt), 'a new session');
  assert.ok(withConflict.conflicts.latest.includes(`./${copy}`), JSON.stringify(withConflict.conflicts));

  const log = readFileSync(join(env.DEVTOOL_HOME!, 'devtool.log'), 'utf8');
  assert.doesNotMatch(log, /session state not published/, 'every write went through');
  assert.doesNotMatch(again.output(), /session state|devtool.dev\/session/i, 'publishing says nothing on the terminal');

  // down (from another terminal) ends the up and deletes the dev Deployment: no session is left.
  const down = dev(['down'], 180_000);
  assert.equal(down.code, 0, down.stderr);
  await new Promise((r) => (again.proc.exitCode !== null ? r(null) : again.proc.once('exit', r)));
  const left = await apps.listNamespacedDeployment({ namespace: s.namespace });
  assert.deepEqual(
    left.items.filter((d) => d.metadata?.annotations?.[DEV_SESSION_ANNOTATION] !== undefined).map((d) => d.metadata?.name),
    [],
  );
  assert.deepEqual(
    left.items.map((d) => d.metadata?.name),
    ['sess-api'],
  );
});
