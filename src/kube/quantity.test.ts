import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exceeds, formatQuantity, parseQuantity } from './quantity.ts';

test('quantities in every suffix, fraction and exponent form the API server accepts', () => {
  const cases: [string, number][] = [
    ['250m', 0.25],
    ['2', 2],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['128Mi', 128 * 2 ** 20],
    ['1k', 1000],
    ['1M', 1e6],
    ['1e3', 1000],
    ['1E-3', 0.001],
    ['100u', 1e-4],
    ['5n', 5e-9],
  ];
  for (const [text, value] of cases) assert.ok(Math.abs(parseQuantity(text)! - value) < 1e-12, `${text} -> ${parseQuantity(text)}`);
  assert.equal(parseQuantity(undefined), undefined);
  for (const bad of ['', 'Mi', '1.5 Gi', '1Gib', 'abc', '1x']) assert.equal(parseQuantity(bad), undefined, bad);
});

test('comparisons forgive the rounding of decimal fractions, nothing more', () => {
  assert.equal(exceeds(0.1 + 0.2, 0.3), false);
  assert.equal(exceeds(0.301, 0.3), true);
  assert.equal(exceeds(2 ** 30 + 1, 2 ** 30), true);
});

test('values in words: CPU in cores or millicores, bytes in the largest binary unit that divides them, counts as numbers', () => {
  assert.equal(formatQuantity('requests.cpu', 0.25), '250m');
  assert.equal(formatQuantity('limits.cpu', 2), '2');
  assert.equal(formatQuantity('memory', 512 * 2 ** 20), '512Mi');
  assert.equal(formatQuantity('requests.storage', 2 ** 30), '1Gi');
  assert.equal(formatQuantity('limits.memory', 1000), '1000');
  assert.equal(formatQuantity('pods', 3), '3');
});
