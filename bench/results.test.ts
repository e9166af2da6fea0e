import { test } from 'node:test';
import assert from 'node:assert/strict';
import { figure, resultRecord, thisMachine } from './results.mjs';

const machine = { cores: 2, cpu: 'test cpu', memoryGiB: 7.8, os: 'Debian GNU/Linux 12 (bookworm), Linux 6.1.0 x64', node: 'v20.0.0', loadAverage1m: 0.5 };
const at = { date: new Date('2026-12-01T12:00:00Z'), machine };

test('a result record: when, where, the figures and baseline with units, each target checked', () => {
  const record = resultRecord(
    {
      bench: 'startup',
      command: 'node bench/startup.mjs',
      figures: { versionMedian: figure(62.5, 'ms'), versionToNode: figure(1.41, 'x') },
      baseline: { nodeE0Median: figure(44.3, 'ms') },
      targets: [{ figure: 'versionToNode', max: 1.5, text: '`devtool version` within 1.5x of `node -e 0`' }],
      details: { runs: 20 },
    },
    at,
  );
  assert.deepEqual(record, {
    bench: 'startup',
    date: '2026-12-01T12:00:00.000Z',
    command: 'node bench/startup.mjs',
    machine,
    figures: { versionMedian: { value: 62.5, unit: 'ms' }, versionToNode: { value: 1.41, unit: 'x' } },
    baseline: { nodeE0Median: { value: 44.3, unit: 'ms' } },
    targets: [{ figure: 'versionToNode', max: 1.5, text: '`devtool version` within 1.5x of `node -e 0`', met: true }],
    pass: true,
    details: { runs: 20 },
  });
});

test('a target missed fails the run; one at its maximum is met', () => {
  const record = resultRecord(
    {
      bench: 'b',
      command: 'node bench/b.mjs',
      figures: { a: figure(10, 'ms'), b: figure(3, 'count') },
      targets: [
        { figure: 'a', max: 10, text: 'a at most 10 ms' },
        { figure: 'b', max: 0, text: 'no b' },
      ],
    },
    at,
  );
  assert.deepEqual(
    record.targets.map((t) => t.met),
    [true, false],
  );
  assert.equal(record.pass, false);
  assert.deepEqual(record.baseline, {});
});

test('a target that names no figure of the run is a mistake of the bench', () => {
  assert.throws(
    () => resultRecord({ bench: 'b', command: 'c', figures: {}, targets: [{ figure: 'gone', max: 1, text: 'gone under 1' }] }, at),
    /b: the target "gone under 1" names no figure of the run \(gone\)/,
  );
});

test('the machine: cores, memory and system of this one', () => {
  const m = thisMachine();
  assert.ok(m.cores >= 1 && m.memoryGiB > 0);
  assert.match(m.os, /Linux|Darwin/);
  assert.equal(m.node, process.version);
});
