import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectGarbage } from './memory.ts';

test('collectGarbage frees what nothing refers to any more, at once', () => {
  let garbage: string[][] | undefined = Array.from({ length: 200 }, (_, i) => Array.from({ length: 2000 }, (_, j) => `entry ${i}/${j} of a big list`));
  const held = process.memoryUsage().heapUsed;
  assert.ok(garbage.length === 200);
  garbage = undefined;
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  assert.ok(held - after > 10_000_000, `heap ${Math.round(held / 1e6)} MB before, ${Math.round(after / 1e6)} MB after`);
});

test("collectAfterBurst: the young generation a burst grew stays after the collection at the burst's end, and is given back at the quiet one", () => {
  const memory = JSON.stringify(fileURLToPath(new URL('./memory.ts', import.meta.url)));
  // A new process, so that no other test's allocation counts; 6 s: V8 judges the rate over 5 s.
  const script =
    `const { collectAfterBurst } = await import(${memory}); const v8 = await import('node:v8');` +
    "const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size / 2 ** 20;" +
    // Objects that live a little while, as a sync's lists do: the young generation grows for them.
    'let keep = []; for (let r = 0; r < 12; r++) {' +
    '  for (let i = 0; i < 100000; i++) keep.push({ i, s: "x" + i });' +
    '  if (keep.length > 500000) keep = [];' +
    '} keep = undefined;' +
    'const burst = young(); const quiet = collectAfterBurst(6000); const atEnd = young();' +
    'const alive = setInterval(() => {}, 1000); await quiet; clearInterval(alive);' +
    'console.log(JSON.stringify({ burst, atEnd, quiet: young() }));';
  const mb = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<
    string,
    number
  >;
  assert.ok(mb.burst! >= 8 && mb.atEnd! >= 8, `the burst grew it: ${JSON.stringify(mb)} MB`);
  assert.ok(mb.quiet! <= 2, `given back when quiet: ${JSON.stringify(mb)} MB`);
});
