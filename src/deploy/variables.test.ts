import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVariables } from './variables.ts';

test('KEY=VALUE, values with = and empty values; the last flag wins', () => {
  assert.deepEqual(parseVariables(['A=1', 'B=x=y', 'C=', 'A=2']), { A: '2', B: 'x=y', C: '' });
});

test('rejects entries without a valid key, naming the flag', () => {
  for (const bad of ['A', '=1', '1A=2', 'A-B=1']) assert.throws(() => parseVariables([bad]), /--var/);
});

test('an error names the key, never the value (errors reach devtool.log)', () => {
  for (const bad of ['DB-PASSWORD=s3cr3t-value', 's3cr3t-value']) {
    assert.throws(
      () => parseVariables([bad]),
      (err: Error) => !err.message.includes('s3cr3t-value') && /--var/.test(err.message),
    );
  }
  assert.throws(() => parseVariables(['DB-PASSWORD=x']), /"DB-PASSWORD=\.\.\."/);
});
