import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';

const spool = (sb: CommandSandbox) => {
  const file = join(sb.devtoolHome, 'analytics-spool.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { action: string; success: boolean }).action);
};

test('`analytics --disable` stops the records for good; `analytics` starts them again', async () => {
  const sandbox = commandSandbox();
  success(await runCommand(['version'], { sandbox }));
  const off = success(await runCommand(['analytics', '--disable'], { sandbox }));
  assert.deepEqual([off.stdout, off.stderr], ['Analytics collection is disabled\n', '']);
  assert.equal((JSON.parse(readFileSync(join(sandbox.devtoolHome, 'analytics.json'), 'utf8')) as { enabled: boolean }).enabled, false);
  success(await runCommand(['version'], { sandbox }));
  assert.deepEqual(spool(sandbox), ['version']);

  const on = success(await runCommand(['analytics'], { sandbox }));
  assert.equal(on.stdout, 'Analytics collection is enabled\n');
  success(await runCommand(['version'], { sandbox }));
  assert.deepEqual(spool(sandbox), ['version', 'analytics', 'version']);
});

test('DEVTOOL_DISABLE_ANALYTICS=1: no record for that run, and nothing stored', async () => {
  const sandbox = commandSandbox();
  success(await runCommand(['version'], { sandbox, env: { DEVTOOL_DISABLE_ANALYTICS: '1' } }));
  assert.deepEqual(spool(sandbox), []);
  success(await runCommand(['version'], { sandbox }));
  assert.deepEqual(spool(sandbox), ['version']);
});

test('a bad --disable value: one line, exit 2, the setting unchanged', async () => {
  const sandbox = commandSandbox();
  const r = await runCommand(['analytics', '--disable=maybe'], { sandbox });
  assert.match(failure(r, ExitCode.usage), /--disable: expected true or false/);
  assert.equal(existsSync(join(sandbox.devtoolHome, 'analytics.json')), false);
});
