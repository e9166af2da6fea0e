import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '../log/logger.ts';
import { guiPortFromLog, listenerCheck, LocalSyncthingApi, recordedAddress } from './local-address.ts';

const listenerHeldBy = (pid: number, port: number) => listenerCheck()(pid, port);
import { LocalSyncthing } from './local-syncthing.ts';

const hasProc = existsSync('/proc/self/fd');
const KEY = 'local-api-key';

test('the port comes from Syncthing v1.30.0 saying where its API listens, the last time it said so', () => {
  const log = [
    '[ROA46] 2026/11/24 08:44:06 INFO: TCP listener (127.0.0.1:44193) starting',
    '[ROA46] 2026/11/24 08:44:06 INFO: GUI and API listening on 127.0.0.1:37831',
    '[ROA46] 2026/11/24 08:44:06 INFO: Access the GUI via the following URL: http://127.0.0.1:0/',
  ];
  assert.equal(guiPortFromLog(log), 37831);
  // The API restarted within the same process (a GUI setting changed): the new port wins.
  assert.equal(guiPortFromLog([...log, '[ROA46] 2026/11/24 08:50:00 INFO: GUI and API listening on 127.0.0.1:40001']), 40001);
  assert.equal(guiPortFromLog(log.slice(0, 1)), undefined);
  assert.equal(guiPortFromLog(['[ROA46] 2026/11/24 08:44:06 INFO: GUI and API listening on 127.0.0.1:']), undefined, 'a line cut short');
  assert.equal(guiPortFromLog(['[ROA46] 2026/11/24 08:44:06 INFO: GUI and API listening on 0.0.0.0:8384']), undefined, 'never anything but loopback');
  assert.equal(guiPortFromLog(['GUI and API listening on 127.0.0.1:0']), undefined);
});

/** An HTTP server standing in for Syncthing's API (or for a program that took its port): what it was sent. */
async function server(): Promise<{ port: number; keysSeen: string[]; close(): void }> {
  const keysSeen: string[] = [];
  const s = createServer((req, res) => {
    keysSeen.push(String(req.headers['x-api-key']));
    res.end('{"ping":"pong"}');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { port: (s.address() as AddressInfo).port, keysSeen, close: () => s.close() };
}

test('a port our Syncthing no longer holds gets no request, so never the API key', { skip: !hasProc && 'needs /proc' }, async (t) => {
  const squatter = await server();
  t.after(() => squatter.close());
  // Our Syncthing (here a sleeping process) is not the one listening there any more.
  const ours = spawn('sleep', ['30']);
  t.after(() => ours.kill('SIGKILL'));
  assert.equal(listenerHeldBy(ours.pid!, squatter.port), false);
  assert.equal(listenerHeldBy(process.pid, squatter.port), true, 'this process is the one listening');
  const api = new LocalSyncthingApi(() => ({ pid: ours.pid!, port: squatter.port }), KEY);
  await assert.rejects(api.request('GET', '/rest/system/ping'), /127\.0\.0\.1:\d+ is no longer the local sync service's \(pid \d+\): nothing sent/);
  assert.deepEqual(squatter.keysSeen, []);
  // The process that holds it gets the request and the key.
  const held = new LocalSyncthingApi(() => ({ pid: process.pid, port: squatter.port }), KEY);
  assert.deepEqual(await held.request('GET', '/rest/system/ping'), { ping: 'pong' });
  assert.deepEqual(squatter.keysSeen, [KEY]);
  assert.equal(held.baseUrl, `http://127.0.0.1:${squatter.port}`);
  // While none listens (starting, restarting) nothing is sent either.
  await assert.rejects(new LocalSyncthingApi(() => undefined, KEY).request('GET', '/rest/system/ping'), /not listening/);
});

test('a confirmed listener stops counting once its port is let go and taken by another program', { skip: !hasProc && 'needs /proc' }, async (t) => {
  const check = listenerCheck();
  const ours = await server();
  assert.equal(check(process.pid, ours.port), true);
  assert.equal(check(process.pid, ours.port), true, 'again, from what it remembered');
  ours.close();
  const other = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${ours.port}, '127.0.0.1', () => console.log('listening'))`]);
  t.after(() => other.kill('SIGKILL'));
  await new Promise((r) => other.stdout.once('data', r));
  assert.equal(check(process.pid, ours.port), false);
  assert.equal(check(other.pid!, ours.port), true);
});

/**
 * A stand-in for both `devtool-agent` (`syncthing-config`, `with-parent ... -- syncthing serve`) and
 * Syncthing: serves the API on a port the kernel picks and logs it as Syncthing does.
 */
function fakeSyncthing(dir: string): string {
  const path = join(dir, 'fake-syncthing');
  const script = `if (process.argv[2] === 'syncthing-config') process.exit(0);
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
  const local = new LocalSyncthing({ stateDir, syncthingBinary: fake, agentBinary: fake, contract: {}, log, notice: (m) => notices.push(m) });
  t.after(() => local.stop());
  const api = new LocalSyncthingApi(() => local.address, KEY);
  await local.start();
  await api.waitReady(10_000);
  const first = local.address!;
  assert.ok(first.port > 0);
  assert.deepEqual(recordedAddress(stateDir), first, 'what status reads');
  if (hasProc) assert.equal(listenerHeldBy(first.pid, first.port), true, 'the port is held by the process LocalSyncthing started');

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

  await local.stop();
  assert.equal(local.address, undefined);
  assert.equal(recordedAddress(stateDir), undefined);
});
