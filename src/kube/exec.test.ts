import assert from 'node:assert/strict';
import { test } from 'node:test';
import { framedSender, STDIN_HEADROOM } from './exec.ts';

/** A socket that drains `perMs` bytes a millisecond of what is queued on it. */
function fakeSocket(perMs: number) {
  const ws = { bufferedAmount: 0, readyState: 1, sent: [] as Buffer[], maxQueued: 0, send(_data: Buffer) {} };
  ws.send = (data: Buffer) => {
    ws.sent.push(data);
    ws.bufferedAmount += data.length;
    ws.maxQueued = Math.max(ws.maxQueued, ws.bufferedAmount);
  };
  const timer = setInterval(() => (ws.bufferedAmount = Math.max(0, ws.bufferedAmount - perMs)), 1);
  return { ws, stop: () => clearInterval(timer) };
}

test('stdin messages go out as given, the stdin channel in the byte left free: no copy', async () => {
  const { ws, stop } = fakeSocket(1 << 20);
  const send = framedSender(ws);
  const message = Buffer.from([0xff, 1, 2, 3]);
  await send(message);
  stop();
  assert.equal(STDIN_HEADROOM, 1);
  assert.equal(ws.sent[0], message, 'the same buffer');
  assert.deepEqual([...message], [0, 1, 2, 3]);
});

test('send waits while the socket holds too much, so a whole tree never sits in memory', async () => {
  const { ws, stop } = fakeSocket(64_000);
  ws.bufferedAmount = 5 * 1024 * 1024; // a slow network: the socket is full from the start
  const send = framedSender(ws);
  for (let i = 0; i < 40; i++) await send(Buffer.alloc(512 * 1024));
  stop();
  assert.equal(ws.sent.length, 40);
  assert.ok(ws.maxQueued <= 5 * 1024 * 1024 + 512 * 1024, `the socket held ${ws.maxQueued} bytes`);
});

test('send fails once the exec connection has closed, also while waiting', async () => {
  const closed = { bufferedAmount: 0, readyState: 3, send() {} };
  await assert.rejects(framedSender(closed)(Buffer.alloc(2)), /closed/);
  const { ws, stop } = fakeSocket(0);
  ws.bufferedAmount = 10 * 1024 * 1024;
  const waiting = framedSender(ws)(Buffer.alloc(2));
  setTimeout(() => (ws.readyState = 3), 20);
  await assert.rejects(waiting, /closed/);
  stop();
});
