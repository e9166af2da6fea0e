import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { test } from 'node:test';
import { pumpStdin } from './exec.ts';

test('stdin for an exec: small chunks go together, the input waits while the socket holds too much', async () => {
  // 400 chunks of 10 kB (a tar stream of small files), 4 MB in all.
  const chunks = Array.from({ length: 400 }, (_, i) => Buffer.alloc(10_000, i % 256));
  const input = Readable.from(chunks);
  const stdin = new PassThrough();
  // A socket that drains 64 kB a millisecond: bytes written to stdin are queued on it.
  const ws = { bufferedAmount: 0, readyState: 1 };
  const writes: number[] = [];
  let maxQueued = 0;
  stdin.on('data', (d: Buffer) => {
    writes.push(d.length);
    ws.bufferedAmount += d.length;
    maxQueued = Math.max(maxQueued, ws.bufferedAmount);
  });
  const drain = setInterval(() => (ws.bufferedAmount = Math.max(0, ws.bufferedAmount - 64_000)), 1);
  // Fills the socket up front, as a slow network would.
  ws.bufferedAmount = 5 * 1024 * 1024;
  await pumpStdin(input, stdin, ws);
  clearInterval(drain);
  const all = Buffer.concat(chunks);
  assert.equal(writes.reduce((a, b) => a + b, 0), all.length, 'every byte arrives');
  assert.ok(writes.slice(0, -1).every((n) => n >= 256 * 1024), `writes of at least 256 KiB but the last: ${writes.join(',')}`);
  assert.ok(maxQueued <= 5 * 1024 * 1024 + 300_000, `the socket held ${maxQueued} bytes`);
});

test('stdin for an exec: a closed connection stops the pump with an error', async () => {
  const input = Readable.from([Buffer.alloc(300_000)]);
  const ws = { bufferedAmount: 10 * 1024 * 1024, readyState: 3 };
  await assert.rejects(pumpStdin(input, new PassThrough(), ws), /closed/);
});
