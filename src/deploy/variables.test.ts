import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVariables } from './variables.ts';

test('KEY=VALUE, values with = and empty values; the last flag wins', () => {
  assert.deepEqual(parseVariables(['A=1', 'B=x=y', 'C=', 'A=2']), { A: '2', B: 'x=y', C: '' });
});

test('rejects entries without a valid key, naming the flag', () => {
  for (const bad of ['A', '=1', '1A=2', 'A-B=1']) assert.throws(() => parseVariables([bad]), /--var/);
});
