import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type ssh2 from 'ssh2';
import { ConnectionLostError, runSshProgram, shellJoin } from './ssh-program.ts';

test('words are quoted for the remote shell only when needed', () => {
  assert.equal(shellJoin(['npm', 'test']), 'npm test');
  assert.equal(shellJoin(['sh', '-c', 'echo $HOSTNAME; exit 7']), "sh -c 'echo $HOSTNAME; exit 7'");
  assert.equal(shellJoin(["it's"]), "'it'\\''s'");
  assert.equal(shellJoin(['']), "''");
});

/** An ssh2 client whose exec channel does what `script` says: emit an exit status or not, then close. */
function fakeClient(script: (channel: PassThrough) => void) {
  return Object.assign(new EventEmitter(), {
    exec: (_command: string, _opts: unknown, cb: (err: Error | undefined, channel: unknown) => void) => {
      const channel = Object.assign(new PassThrough(), { stderr: new PassThrough(), setWindow: () => undefined, close: () => channel.emit('close') });
      cb(undefined, channel);
      setImmediate(() => script(channel));
    },
  }) as unknown as ssh2.Client;
}

const io = () => ({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() });

test("runSshProgram: the command's exit status; a channel closed without one is an error that says so", async () => {
  const exits = fakeClient((ch) => {
    ch.emit('exit', 7);
    ch.emit('close');
  });
  assert.equal(await runSshProgram(exits, io(), { command: 'false', pty: false }), 7);
  const dropped = fakeClient((ch) => ch.emit('close'));
  await assert.rejects(runSshProgram(dropped, io(), { command: 'sleep 60', pty: false }), /connection to the dev container closed before the command ended/);
});

test('runSshProgram: a connection that goes while the session opens is the same loss, whatever ssh2 calls it', async () => {
  // ssh2 says 'close' first, then fails the pending request.
  const closing = Object.assign(new EventEmitter(), {
    exec: (_command: string, _opts: unknown, cb: (err: Error | undefined) => void) => {
      setImmediate(() => {
        closing.emit('close');
        cb(new Error('No response from server'));
      });
    },
  }) as unknown as ssh2.Client;
  await assert.rejects(runSshProgram(closing, io(), { command: 'true', pty: false }), ConnectionLostError);
  const gone = Object.assign(new EventEmitter(), {
    exec: () => {
      throw new Error('Not connected');
    },
  }) as unknown as ssh2.Client;
  await assert.rejects(runSshProgram(gone, io(), { command: 'true', pty: false }), ConnectionLostError);
  const refused = Object.assign(new EventEmitter(), {
    exec: (_command: string, _opts: unknown, cb: (err: Error | undefined) => void) => setImmediate(() => cb(new Error('Unable to exec'))),
  }) as unknown as ssh2.Client;
  await assert.rejects(runSshProgram(refused, io(), { command: 'true', pty: false }), /^Error: Unable to exec$/);
});

test('runSshProgram: aborted, it closes the channel, gives the terminal back and rejects with the reason', async () => {
  const stop = new AbortController();
  let closed = false;
  const c = fakeClient((ch) => {
    ch.on('close', () => (closed = true));
    stop.abort('SIGTERM');
  });
  const streams = io();
  const raw: boolean[] = [];
  const stdin = Object.assign(streams.stdin, { setRawMode: (mode: boolean) => raw.push(mode) });
  await assert.rejects(runSshProgram(c, { ...streams, stdin }, { command: 'sleep 60', pty: true, signal: stop.signal }), (err) => err === 'SIGTERM');
  assert.equal(closed, true);
  assert.deepEqual(raw, [true, false]);
});
