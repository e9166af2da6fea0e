import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Progress } from './progress.ts';

test('steps, results and warnings also go to the log (the timeline of a slow up); command output does not', () => {
  let out = '';
  const logged: string[] = [];
  const p = new Progress({ write: (t: string) => (out += t) }, () => new Date(0), { info: (m) => logged.push(m) });
  p.step('starting dev container api-devtool');
  p.output('migrate', 'a line of a deploy command');
  p.detail('a log tail');
  p.child('dep').warn('slow');
  p.done('ready');
  assert.deepEqual(logged, ['progress: • starting dev container api-devtool', 'progress: ! slow', 'progress: ✓ ready']);
  assert.equal(out, '• starting dev container api-devtool\n[migrate] a line of a deploy command\n    a log tail\n[dep] ! slow\n✓ ready\n');
});
