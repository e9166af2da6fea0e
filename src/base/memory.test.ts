import assert from 'node:assert/strict';
import { test } from 'node:test';
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
