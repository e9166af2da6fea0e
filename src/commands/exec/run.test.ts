import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { folderHash, FOLDER_ANNOTATION } from '../../dev/names.ts';
import { devState } from '../../dev/target.ts';
import type { Factory } from '../../factory.ts';
import { commandSandbox, createTestFactory, failure, fakeKubeClient, runCommand } from '../../../test/command-harness.ts';

// A session in a running dev container is tested end to end (test/e2e/dev-up.e2e.test.ts); here,
// what `exec` refuses before it opens a tunnel, over a fake of the objects it reads.

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

/** A namespace with no original, and the mirror of api active from `folder` (none: no mirror) without a running pod. */
function namespaceWithMirror(folder: string | undefined): Factory['kube'] {
  const notFound = async () => {
    throw Object.assign(new Error('not found'), { code: 404 });
  };
  return async (target) =>
    fakeKubeClient(target, {
      apps: {
        listNamespacedDeployment: async () => ({ items: [] }),
        listNamespacedStatefulSet: async () => ({ items: [] }),
        readNamespacedStatefulSet: notFound,
        readNamespacedDeployment: async ({ name }: { name: string }) =>
          name === 'api-devtool' && folder ? { metadata: { name, annotations: { [FOLDER_ANNOTATION]: folderHash(folder) } } } : notFound(),
      },
      core: { listNamespacedPod: async () => ({ items: [] }) },
    });
}

test("this folder's keys, but its dev container is gone or has no running pod: one line each", async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  // The keys `up` left in this folder's local state of api.
  devState(createTestFactory({ sandbox }).f, sandbox.project, 'alpha', 'default', 'api').keys();

  const gone = await runCommand(['exec', '--', 'ls'], { sandbox, kube: namespaceWithMirror(undefined) });
  assert.equal(failure(gone, ExitCode.failure), "Error: no dev container is active for api from this folder: run 'devtool up api' first");
  const elsewhere = await runCommand(['exec', '--', 'ls'], { sandbox, kube: namespaceWithMirror(commandSandbox().project) });
  assert.equal(failure(elsewhere, ExitCode.failure), "Error: no dev container is active for api from this folder: run 'devtool up api' first");
  const restarting = await runCommand(['exec', 'api', '--', 'ls'], { sandbox, kube: namespaceWithMirror(sandbox.project) });
  assert.equal(failure(restarting, ExitCode.failure), "Error: dev container api has no running pod right now (restarting?); try again, or 'devtool up api'");
});
