import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shellJoin } from './session.ts';

test('words are quoted for the remote shell only when needed', () => {
  assert.equal(shellJoin(['npm', 'test']), 'npm test');
  assert.equal(shellJoin(['sh', '-c', 'echo $HOSTNAME; exit 7']), "sh -c 'echo $HOSTNAME; exit 7'");
  assert.equal(shellJoin(["it's"]), "'it'\\''s'");
  assert.equal(shellJoin(['']), "''");
});
