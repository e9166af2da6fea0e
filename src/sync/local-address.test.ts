import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { guiPortFromLog, isLocalSyncthingOf, listenerCheck, LocalSyncthingApi } from './local-address.ts';

const listenerHeldBy = (pid: number, port: number) => listenerCheck()(pid, port);

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

test('the local Syncthing of a state folder is told by its command line, as /proc, ps (a home with a space arrives split) or Windows give it', () => {
  const ours = isLocalSyncthingOf('/Users/Ann Lee/.devtool/dev/k1');
  assert.equal(ours(['/opt/devtool/syncthing', 'serve', '--home=/Users/Ann Lee/.devtool/dev/k1/syncthing']), true);
  assert.equal(ours(['/opt/devtool/syncthing', 'serve', '--home=/Users/Ann', 'Lee/.devtool/dev/k1/syncthing']), true);
  assert.equal(ours(['/opt/devtool/syncthing', 'serve', '--home=/Users/Ann Lee/.devtool/dev/k2/syncthing']), false);
  // A release's host bundle, run as Syncthing.
  assert.equal(ours(['/opt/devtool/bin/devtool-host', 'syncthing', 'serve', '--home=/Users/Ann Lee/.devtool/dev/k1/syncthing']), true);
  assert.equal(ours(['/usr/bin/less', '/Users/Ann Lee/.devtool/dev/k1/x']), false);
});

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
