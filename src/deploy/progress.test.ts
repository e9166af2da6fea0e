import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Progress } from './progress.ts';

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
