import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProcessTable } from '../io/stop-process.ts';
import { Logger } from '../log/logger.ts';
import { listenerCheck, LocalSyncthingApi, recordedAddress } from './local-address.ts';
import { clearAllButIndex, LocalSyncthing, stopStaleSyncthing, syncthingEnv } from './local-syncthing.ts';

const hasProc = existsSync('/proc/self/fd');
const KEY = 'local-api-key';

/**
 * A stand-in for the host bundle run as `devtool-agent` (`syncthing-config`, `with-parent ... --
 * syncthing serve`) and as Syncthing (`syncthing serve`): serves the API on a port the kernel picks
 * and logs it as Syncthing does. Its first argument must name the program.
 */
function fakeSyncthing(dir: string): string {
  const path = join(dir, 'fake-host');
  const script = `const a = process.argv.slice(2);
if (a[0] === 'devtool-agent' && a[1] === 'syncthing-config') process.exit(0);
// with-parent PPID -- BUNDLE syncthing serve ...: serves itself, as the Syncthing it would exec.
const serve = a[0] === 'devtool-agent' && a[1] === 'with-parent' ? a.slice(a.indexOf('--') + 2) : a;
if (serve[0] !== 'syncthing' || serve[1] !== 'serve') { console.error('unexpected: ' + a.join(' ')); process.exit(2); }
const s = require('node:http').createServer((req, res) => res.end('{"ping":"pong"}'));
s.listen(0, '127.0.0.1', () => {
  console.log('[FAKE1] 2026/11/24 08:44:06 INFO: TCP listener (127.0.0.1:44193) starting');
  console.log('[FAKE1] 2026/11/24 08:44:06 INFO: GUI and API listening on 127.0.0.1:' + s.address().port);
  console.log('[FAKE1] 2026/11/24 08:44:06 INFO: Access the GUI via the following URL: http://127.0.0.1:0/');
});`;
  writeFileSync(path, `#!${process.execPath}\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

test('the local Syncthing binds its own port, and it is read again after every restart', async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'local-syncthing-'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  const fake = fakeSyncthing(stateDir);
  const log = new Logger({ file: join(stateDir, 'devtool.log'), terminal: new Writable({ write: (_c, _e, d) => d() }), level: 'error', now: () => new Date() });
  const notices: string[] = [];
  let restarts = 0;
  const local = new LocalSyncthing({
    stateDir,
    syncthingBinary: { file: fake, args: ['syncthing'] },
    agentBinary: { file: fake, args: ['devtool-agent'] },
    agentConfig: {},
    guardedFolders: [],
    log,
    notice: (m) => notices.push(m),
    restarted: () => restarts++,
  });
  t.after(() => local.stop());
  const api = new LocalSyncthingApi(() => local.address, KEY);
  await local.start();
  assert.equal(restarts, 0, 'the first start is no restart');
  await api.waitReady(10_000);
  const first = local.address!;
  assert.ok(first.port > 0);
  assert.deepEqual(recordedAddress(stateDir), first, 'what status reads');
  if (hasProc) assert.equal(listenerCheck()(first.pid, first.port), true, 'the port is held by the process LocalSyncthing started');

  // It dies: its port is forgotten at once, and the restarted one's is read from the log.
  process.kill(first.pid, 'SIGKILL');
  while (local.address?.pid === first.pid) await sleep(5);
  assert.equal(local.address, undefined, 'no address between the exit and the next start');
  assert.equal(recordedAddress(stateDir), undefined);
  await api.waitReady(10_000);
  const second = local.address!;
  assert.notEqual(second.pid, first.pid);
  assert.deepEqual(recordedAddress(stateDir), second);
  assert.match(notices.join('\n'), /the local sync service stopped \(SIGKILL\); restarting it/);
  assert.equal(restarts, 1, 'the session hears of the restart (its folders must be set up again)');

  await local.stop();
  assert.equal(local.address, undefined);
  assert.equal(recordedAddress(stateDir), undefined);
});

test('a Syncthing left by a killed up is stopped only when its PID file still names a Syncthing of this state folder', async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'stale-syncthing-'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  const ours = ['syncthing', 'serve', `--home=${join(stateDir, 'syncthing')}`, '--no-browser'];
  const signals: string[] = [];
  let ended = false;
  const processes: ProcessTable = {
    commandLine: (pid) => (pid === 500 && !ended ? ours : pid === 501 ? ['syncthing', 'serve', '--home=/elsewhere/syncthing'] : undefined),
    signal: (pid, signal) => {
      signals.push(`${signal} ${pid}`);
      ended = pid === 500;
    },
    sleep: async () => undefined,
  };
  const pidFile = join(stateDir, 'syncthing.pid');
  writeFileSync(pidFile, '501\n');
  await stopStaleSyncthing(stateDir, processes);
  assert.deepEqual(signals, [], "another dev environment's Syncthing is left alone");
  assert.equal(existsSync(pidFile), false);
  writeFileSync(pidFile, '500\n');
  await stopStaleSyncthing(stateDir, processes);
  assert.deepEqual(signals, ['SIGTERM 500']);
  assert.equal(existsSync(pidFile), false);
});

test('the local Syncthing runs with GOGC 50 unless the developer chose one, and always unmonitored, without upgrades or a default folder', () => {
  const ours = { DEVTOOL_GUARDED_FOLDERS: 'a,b', STMONITORED: 'yes', STNOUPGRADE: '1', STNORESTART: '1', STNODEFAULTFOLDER: '1' };
  assert.deepEqual(syncthingEnv({ PATH: '/bin' }, ['a', 'b']), { PATH: '/bin', GOGC: '50', ...ours });
  assert.deepEqual(syncthingEnv({ PATH: '/bin', GOGC: '200', STMONITORED: 'no' }, ['a', 'b']), { PATH: '/bin', GOGC: '200', ...ours });
});

test("the guarded folders are devtool's to name: a developer's variable neither adds nor removes one", () => {
  assert.equal(syncthingEnv({ DEVTOOL_GUARDED_FOLDERS: '' }, ['a']).DEVTOOL_GUARDED_FOLDERS, 'a');
  assert.equal(syncthingEnv({ DEVTOOL_GUARDED_FOLDERS: 'x' }, []).DEVTOOL_GUARDED_FOLDERS, '');
});

test('down keeping the volume: the index database alone stays, keys and passwords go', (t) => {
  const state = mkdtempSync(join(tmpdir(), 'devstate-'));
  t.after(() => rmSync(state, { recursive: true, force: true }));
  mkdirSync(join(state, 'syncthing/index-v0.14.0.db'), { recursive: true });
  writeFileSync(join(state, 'syncthing/index-v0.14.0.db/000001.log'), 'index');
  for (const f of ['syncthing/cert.pem', 'syncthing/key.pem', 'syncthing/config.xml', 'sync-keys.json', 'keys.json', 'syncthing-contract.json', 'up.pid'])
    writeFileSync(join(state, f), 'secret');
  mkdirSync(join(state, 'trash/f1'), { recursive: true });
  clearAllButIndex(state);
  assert.deepEqual(readdirSync(state), ['syncthing']);
  assert.deepEqual(readdirSync(join(state, 'syncthing')), ['index-v0.14.0.db']);
  assert.deepEqual(readdirSync(join(state, 'syncthing/index-v0.14.0.db')), ['000001.log']);
  clearAllButIndex(join(state, 'missing')); // a state folder that is gone: nothing to do
});
