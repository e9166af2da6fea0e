import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, failure, runCommand } from '../../../test/command-harness.ts';

// The figures of a running `up` are tested end to end (test/e2e/dev-sync.e2e.test.ts); `status`
// reads only this machine's state of the dev containers, so no cluster is given here.

test('one dev container without a running `up`: one line, exit 1', async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  const r = await runCommand(['status'], { sandbox });
  assert.equal(failure(r, ExitCode.failure), "Error: file sync is not running for api from this folder: start it with 'devtool up api'");
  assert.equal(r.stdout, '');
});

test('several, none running: one line naming them', async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n  web:\n    sync: ["./web:/app"]\n');
  assert.equal(
    failure(await runCommand(['status', '--info'], { sandbox }), ExitCode.failure),
    "Error: file sync is not running for any dev container from this folder (api, web): start them with 'devtool up'",
  );
});

test('bad flags and names: usage errors', async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  assert.match(failure(await runCommand(['status', '--watch=often'], { sandbox }), ExitCode.usage), /--watch: expected true or false/);
  assert.match(failure(await runCommand(['status', 'web'], { sandbox }), ExitCode.usage), /has no services entry "web"/);
});
