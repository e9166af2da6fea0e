import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import type { ExecApi } from '../../dev/exec.ts';
import { folderHash } from '../../dev/names.ts';
import { devState } from '../../dev/target.ts';
import { commandSandbox, createTestFactory, failure, runCommand } from '../../../test/command-harness.ts';
import { execHandler } from './run.ts';

// A session in a running dev container is tested end to end (test/e2e/dev-up.e2e.test.ts); here,
// what `exec` refuses before it opens a tunnel, over an in-memory namespace.

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

/**
 * The exec handler over an in-memory namespace: the mirror of api active from `folder` (none: no
 * mirror), without a running pod; a tunnel is never opened.
 */
function namespaceWithMirror(folder: string | undefined) {
  const cluster: ExecApi = {
    mirrorFolder: async (devName) => (devName === 'api' && folder ? folderHash(folder) : undefined),
    hasReadyPod: async () => false,
    tunnel: () => assert.fail('no tunnel is opened when exec refuses'),
  };
  return execHandler(async () => cluster);
}

test("this folder's keys, but its dev container is gone or has no running pod: one line each", async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  // The keys `up` left in this folder's local state of api.
  devState(createTestFactory({ sandbox }).f, sandbox.project, 'alpha', 'default', 'api').keys();

  const gone = await runCommand(['exec', '--', 'ls'], { sandbox, handler: namespaceWithMirror(undefined) });
  assert.equal(failure(gone, ExitCode.failure), "Error: no dev container is active for api from this folder: run 'devtool up api' first");
  const elsewhere = await runCommand(['exec', '--', 'ls'], { sandbox, handler: namespaceWithMirror(commandSandbox().project) });
  assert.equal(failure(elsewhere, ExitCode.failure), "Error: no dev container is active for api from this folder: run 'devtool up api' first");
  const restarting = await runCommand(['exec', 'api', '--', 'ls'], { sandbox, handler: namespaceWithMirror(sandbox.project) });
  assert.equal(failure(restarting, ExitCode.failure), "Error: dev container api has no running pod right now (restarting?); try again, or 'devtool up api'");
});
