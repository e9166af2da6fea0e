import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { failure, runCommand, success } from '../../../test/command-harness.ts';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

test('`version` prints the package version, alone on stdout', async () => {
  const r = success(await runCommand(['version']));
  assert.equal(r.stdout, `devtool version ${pkg.version}\n`);
  assert.equal(r.stderr, '');
});

test('`version` takes no argument', async () => {
  const r = await runCommand(['version', 'extra']);
  assert.match(failure(r, ExitCode.usage), /unexpected argument "extra"/);
  assert.equal(r.stdout, '');
});
