import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, failure, runCommand } from '../../../test/command-harness.ts';

// A session in a running dev container is tested end to end (test/e2e/dev-up.e2e.test.ts); here,
// what `exec` refuses before it opens a tunnel.

test('a command after -- is required', async () => {
  assert.match(failure(await runCommand(['exec']), ExitCode.usage), /missing COMMAND after '--'/);
});

test('no `up` from this folder: one line naming the command to run first, and no cluster asked', async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  const r = await runCommand(['exec', '--', 'ls'], { sandbox });
  assert.equal(failure(r, ExitCode.failure), "Error: no dev container is active for api from this folder: run 'devtool up api' first");
  assert.equal(r.stdout, '');
  assert.equal(
    failure(await runCommand(['exec', 'web', '--', 'ls'], { sandbox }), ExitCode.usage),
    'Error: devtool.yml has no services entry "web" (it has api); add services.web or pick one of those',
  );
});
