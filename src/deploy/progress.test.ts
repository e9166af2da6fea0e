import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COLOUR } from '../io/style.ts';
import { HEARTBEAT_MS, Progress } from './progress.ts';

test('steps, results and warnings also go to the log (the timeline of a slow up); command output does not', () => {
  let out = '';
  const logged: string[] = [];
  const p = new Progress({ write: (t: string) => (out += t) }, () => new Date(0), { fileOnly: (m) => logged.push(m), shows: () => true });
  p.step('starting dev container api-devtool');
  p.output('migrate', 'a line of a deploy command');
  p.detail('a log tail');
  p.child('dep').warn('slow');
  p.done('ready');
  assert.deepEqual(logged, ['progress: • starting dev container api-devtool', 'progress: ! slow', 'progress: ✓ ready']);
  assert.equal(out, '• starting dev container api-devtool\n[migrate] a line of a deploy command\n    a log tail\n[dep] ! slow\n✓ ready\n');
});

test('warnings are left off the terminal when the log level hides them (--loglevel error), kept in the log', () => {
  let out = '';
  const logged: string[] = [];
  const p = new Progress({ write: (t: string) => (out += t) }, () => new Date(0), { fileOnly: (m) => logged.push(m), shows: () => false });
  p.warn('host folder not deployed');
  p.child('dep').warn('slow');
  p.done('ready');
  assert.equal(out, '✓ ready\n');
  assert.deepEqual(logged, ['progress: ! host folder not deployed', 'progress: ! slow', 'progress: ✓ ready']);
  assert.match(p.transcript(), /! host folder not deployed/);
});

test('on a coloured terminal only the marks are coloured; the log and the transcript stay plain', () => {
  let out = '';
  const logged: string[] = [];
  const p = new Progress({ write: (t: string) => (out += t) }, () => new Date(0), { fileOnly: (m) => logged.push(m), shows: () => true, style: COLOUR });
  p.done('ready');
  p.warn('slow');
  p.fail('broken');
  p.child('dep').done('also ready');
  assert.equal(out, '\u001b[32m✓\u001b[39m ready\n\u001b[33m!\u001b[39m slow\n\u001b[31m✗\u001b[39m broken\n[dep] ✓ also ready\n');
  assert.deepEqual(logged, ['progress: ✓ ready', 'progress: ! slow', 'progress: ✗ broken', 'progress: ✓ also ready']);
  assert.ok(!p.transcript().includes('\u001b'), 'no colour in the transcript');
});

test('a long wait says every 10 s what it still awaits and since when, unless the log level hides warnings', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let clock = 0;
  for (const shows of [true, false]) {
    let out = '';
    const p = new Progress({ write: (x: string) => (out += x) }, () => new Date(clock), { fileOnly: () => undefined, shows: () => shows });
    const pending = new Set(['api', 'db']);
    let finish = () => {};
    const waited = p.waiting(() => [...pending].join(', '), new Promise<void>((resolve) => (finish = resolve)));
    clock += HEARTBEAT_MS;
    t.mock.timers.tick(HEARTBEAT_MS);
    pending.delete('db');
    clock += HEARTBEAT_MS;
    t.mock.timers.tick(HEARTBEAT_MS);
    pending.delete('api');
    clock += HEARTBEAT_MS;
    t.mock.timers.tick(HEARTBEAT_MS);
    finish();
    await waited;
    t.mock.timers.tick(HEARTBEAT_MS);
    assert.equal(out, shows ? '… still waiting for api, db (10s)\n… still waiting for api (20s)\n' : '');
    assert.equal(p.transcript(), '');
  }
});
