import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MinHeap } from './min-heap.ts';

test('the heap gives its items back smallest first', () => {
  const heap = new MinHeap<number>((a, b) => a < b);
  const input = [5, 3, 9, 1, 1, 8, 2, 7, 0, 6, 4];
  for (const n of input) heap.push(n);
  const out: number[] = [];
  for (let n = heap.pop(); n !== undefined; n = heap.pop()) out.push(n);
  assert.deepEqual(
    out,
    [...input].sort((a, b) => a - b),
  );
  assert.equal(heap.pop(), undefined);
});
