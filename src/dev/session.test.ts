import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type ssh2 from 'ssh2';
import { runSession, shellJoin } from './session.ts';

test('words are quoted for the remote shell only when needed', () => {
  assert.equal(shellJoin(['npm', 'test']), 'npm test');
  assert.equal(shellJoin(['sh', '-c', 'echo $HOSTNAME; exit 7']), "sh -c 'echo $HOSTNAME; exit 7'");
  assert.equal(shellJoin(["it's"]), "'it'\\''s'");
  assert.equal(shellJoin(['']), "''");
});

/** An ssh2 client whose exec channel does what `script` says: emit an exit status or not, then close. */
function fakeClient(script: (channel: PassThrough) => void) {
  return {
    exec: (_command: string, _opts: unknown, cb: (err: Error | undefined, channel: unknown) => void) => {
      const channel = Object.assign(new PassThrough(), { stderr: new PassThrough(), setWindow: () => undefined });
      cb(undefined, channel);
      setImmediate(() => script(channel));
    },
  } as unknown as ssh2.Client;
}

const io = () => ({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() });

test("runSession: the command's exit status; a channel closed without one is an error that says so", async () => {
  const exits = fakeClient((ch) => {
    ch.emit('exit', 7);
    ch.emit('close');
  });
  assert.equal(await runSession(exits, io(), { command: 'false', pty: false }), 7);
  const dropped = fakeClient((ch) => ch.emit('close'));
  await assert.rejects(runSession(dropped, io(), { command: 'sleep 60', pty: false }), /connection to the dev container closed before the command ended/);
});
