import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectTimeoutError } from './reconnect.ts';
import { ConnectionLostError } from './ssh-program.ts';
import { SHELL_LOST, shellLoop, type ShellLoopOptions } from './up-shell.ts';

/** A fake tunnel and shell: each shell run takes the next scripted outcome. */
function fake(outcomes: (number | 'lost' | Error)[], o: { connections?: (string | 'timeout')[]; stop?: AbortController } = {}) {
  const notices: string[] = [];
  const opened: string[] = [];
  const connections = [...(o.connections ?? [])];
  let pod = 'pod-1';
  const stop = o.stop ?? new AbortController();
  const options: ShellLoopOptions<string> = {
    connection: async () => {
      const next = connections.shift() ?? pod;
      if (next === 'timeout') throw new ConnectTimeoutError("cannot reach the dev container's SSH server");
      pod = next;
      return next;
    },
    shell: async (c) => {
      opened.push(c);
      const outcome = outcomes.shift();
      if (outcome === undefined) return new Promise<number>(() => undefined);
      if (outcome === 'lost') throw new ConnectionLostError();
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    connectedPod: () => pod,
    notice: (m) => notices.push(m),
    stop: stop.signal,
    debug: () => undefined,
  };
  return { options, notices, opened, stop };
}

test('a shell that exits ends the loop with its code, no notice', async () => {
  const f = fake([3]);
  assert.deepEqual(await shellLoop(f.options), { exited: 3 });
  assert.deepEqual(f.notices, []);
});

test('a shell whose connection went opens again in the pod of the next connection, saying so', async () => {
  const f = fake(['lost', 'lost', 0], { connections: ['pod-1', 'timeout', 'timeout', 'pod-2', 'pod-2'] });
  assert.deepEqual(await shellLoop(f.options), { exited: 0 });
  assert.deepEqual(f.opened, ['pod-1', 'pod-2', 'pod-2']);
  assert.deepEqual(f.notices, [SHELL_LOST, 'the shell is open again, in pod pod-2', SHELL_LOST, 'the shell is open again, in pod pod-2']);
});

test('a stop while waiting for the connection ends the loop with its reason', async () => {
  const stop = new AbortController();
  const f = fake(['lost'], { stop });
  f.options.connection = (() => {
    let first = true;
    return () => {
      if (first) {
        first = false;
        return Promise.resolve('pod-1');
      }
      setImmediate(() => stop.abort('SIGTERM'));
      return new Promise<string>(() => undefined);
    };
  })();
  assert.deepEqual(await shellLoop(f.options), { stopped: 'SIGTERM' });
  assert.deepEqual(f.notices, [SHELL_LOST]);
});

test('a stop while the shell runs ends the loop with its reason, and nothing is reopened', async () => {
  const stop = new AbortController();
  const f = fake([], { stop });
  f.options.shell = (_c, signal) =>
    new Promise<number>((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason));
      setImmediate(() => stop.abort('SIGINT'));
    });
  assert.deepEqual(await shellLoop(f.options), { stopped: 'SIGINT' });
  assert.deepEqual(f.notices, []);
});

test('any other failure is not swallowed: neither a shell that cannot start nor a closed tunnel', async () => {
  await assert.rejects(shellLoop(fake([new Error('Unable to open shell')]).options), /Unable to open shell/);
  const closed = fake(['lost']);
  let calls = 0;
  closed.options.connection = async () => {
    if (calls++ === 0) return 'pod-1';
    throw new Error('the connection to the dev container is closed');
  };
  await assert.rejects(shellLoop(closed.options), /is closed/);
});
