import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { formatPath, LocatedError } from './errors.ts';

test('paths read like the YAML they point into', () => {
  assert.equal(formatPath(['services', 'web', 'ports', 0]), 'services.web.ports[0]');
  assert.equal(formatPath(['services', 'web', 'labels', 'com.example.tier']), 'services.web.labels["com.example.tier"]');
  assert.equal(formatPath([0, 'a']), '[0].a');
});

test('a located error is one line, the first problem in file order, exit code 1', () => {
  const err = new LocatedError([
    { pos: { file: 'a.yaml', line: 9, col: 1 }, message: 'second' },
    { pos: { file: 'a.yaml', line: 3, col: 5 }, path: ['services', 'web'], message: 'first\nwith a newline' },
    { pos: { file: 'b.yaml', line: 1, col: 1 }, message: 'other file' },
  ]);
  assert.ok(err instanceof DevtoolError);
  assert.equal(err.exitCode, 1);
  assert.equal(err.message, 'a.yaml:3:5: field services.web: first\\nwith a newline');
  assert.deepEqual(err.lines(), ['a.yaml:3:5: field services.web: first\\nwith a newline', 'a.yaml:9:1: second', 'b.yaml:1:1: other file']);
});
