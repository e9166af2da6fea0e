import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { hostname } from 'node:os';
import { folderHash, FOLDER_ANNOTATION, ORIGIN_ANNOTATION } from '../../dev/names.ts';
import type { DeactivateApi } from '../../dev/deactivate.ts';
import type { OriginalObject } from '../../dev/statefulset.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { downHandler } from './run.ts';

// A real swap and its restoration run end to end (test/e2e/dev-up.e2e.test.ts, dev-statefulset);
// here, what `down` says and which cluster it asks.

function project(services: string[]): CommandSandbox {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), `services:\n${services.map((s) => `  ${s}:\n    sync: [".:/app"]\n`).join('')}`);
  return sandbox;
}

/** A namespace without dev mode, or whose Deployment `original` was swapped from `folder`; it records the targets asked. */
function cluster(swapped?: { original: string; folder: string }) {
  const targets: string[] = [];
  const original: OriginalObject | undefined = swapped && {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: swapped.original,
      annotations: { [FOLDER_ANNOTATION]: folderHash(swapped.folder), [ORIGIN_ANNOTATION]: `${hostname()}:${swapped.folder}` },
    },
  };
  const view: DeactivateApi = {
    findOriginal: async (devName) => (devName === swapped?.original ? original : undefined),
    readMirror: async () => undefined,
    restoreOriginal: async () => assert.fail('nothing is restored here'),
    exists: async () => false,
    delete: async () => assert.fail('nothing is deleted here'),
    countDevPods: async () => 0,
  };
  const handler = downHandler(async (_f, target) => {
    targets.push(`${target.context.name}/${target.namespace}`);
    return view;
  });
  return { handler, targets };
}

test('nothing active: says so per dev container, exit 0', async () => {
  const sandbox = project(['api', 'web']);
  const c = cluster();
  const r = success(await runCommand(['down', '-n', 'feature'], { sandbox, handler: c.handler }));
  assert.match(r.stderr, /no dev container api was active in namespace feature/);
  assert.match(r.stderr, /no dev container web was active in namespace feature/);
  assert.equal(r.stdout, '');
  assert.deepEqual(c.targets, ['alpha/feature']);
});

test('--context picks the cluster for one run', async () => {
  const c = cluster();
  success(await runCommand(['down', 'api', '--context', 'beta'], { sandbox: project(['api']), handler: c.handler }));
  assert.deepEqual(c.targets, ['beta/team']);
});

test('activated from another folder that still exists: one line naming it, nothing changed', async () => {
  const sandbox = project(['api']);
  const other = commandSandbox();
  const c = cluster({ original: 'api', folder: other.project });
  assert.equal(
    failure(await runCommand(['down', 'api'], { sandbox, handler: c.handler }), ExitCode.failure),
    `Error: api was activated from folder ${other.project}: run 'devtool down' there (the folder where 'devtool up' ran)`,
  );
});

test('bad flags and names: usage errors before any cluster is asked', async () => {
  const sandbox = project(['api']);
  assert.match(failure(await runCommand(['down', 'web'], { sandbox }), ExitCode.usage), /has no services entry "web"/);
  assert.match(failure(await runCommand(['down', '--volumes=some'], { sandbox }), ExitCode.usage), /--volumes: expected true or false/);
  assert.match(failure(await runCommand(['down', '-c', 'gamma'], { sandbox }), ExitCode.usage), /--context: unknown context "gamma"/);
});
