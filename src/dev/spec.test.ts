import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitCode, UsageError } from '../base/errors.ts';
import { parseEnvList } from './spec.ts';

test('--env takes KEY=VALUE with a variable name for KEY; anything else is a usage error naming the flag', () => {
  assert.deepEqual(parseEnvList(['A=1', '_b2=x=y', 'EMPTY=']), { A: '1', _b2: 'x=y', EMPTY: '' });
  for (const bad of ['FOO', '=x', '1A=b', 'A-B=c', 'A B=c']) {
    assert.throws(
      () => parseEnvList([bad]),
      (e: unknown) => e instanceof UsageError && e.exitCode === ExitCode.usage && e.message.startsWith(`invalid value "${bad}" for flag --env`),
      bad,
    );
  }
});
