import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { folderHash, FOLDER_ANNOTATION } from '../../dev/names.ts';
import { RESTARTED_AT_ANNOTATION, type RestartApi } from '../../dev/restart.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success, TEST_NOW } from '../../../test/command-harness.ts';
import { restartHandler } from './run.ts';

function project(services: string[]): CommandSandbox {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), `services:\n${services.map((s) => `  ${s}:\n    sync: [".:/app"]\n`).join('')}`);
  return sandbox;
}

/**
 * The mirror Deployments of dev containers (name -> the folder hash they are active from), as
 * restart sees them (RestartApi): the stamp on a template, the rollout's state, the pods. It records
 * the targets asked and the mirrors stamped.
 */
function devCluster(active: Record<string, string>) {
  const patched: string[] = [];
  const targets: string[] = [];
  let stamp: string | undefined;
  const mirror = (dev: string) => ({ metadata: { name: `${dev}-devtool`, annotations: { [FOLDER_ANNOTATION]: active[dev]! } } });
  const view: RestartApi = {
    mirrors: async (devName) => (devName in active ? [mirror(devName)] : []),
    annotateTemplate: async (name, annotations) => {
      patched.push(name);
      stamp = annotations[RESTARTED_AT_ANNOTATION];
    },
    state: async () => ({ state: 'ready' }),
    pods: async () => [{ metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: stamp! } }, status: { phase: 'Running' } }],
  };
  const handler = restartHandler(async (_f, target) => {
    targets.push(`${target.context.name}/${target.namespace}`);
    return view;
  });
  return { handler, patched, targets, stamp: () => stamp };
}

test('`restart NAME`: the dev pod is restarted, and the line names its mirror and namespace', async () => {
  const sandbox = project(['api']);
  const cluster = devCluster({ api: folderHash(sandbox.project) });
  const r = success(await runCommand(['restart', 'api', '-n', 'feature'], { sandbox, handler: cluster.handler }));
  assert.match(r.stderr, /api-devtool restarted in namespace feature/);
  assert.equal(r.stdout, '');
  assert.deepEqual(cluster.patched, ['api-devtool']);
  assert.deepEqual(cluster.targets, ['alpha/feature']);
  assert.equal(cluster.stamp(), TEST_NOW.toISOString(), "the template's stamp is the command's clock");
});

test('`restart` alone: every dev container active from this folder, none when none is', async () => {
  const sandbox = project(['api', 'web']);
  const cluster = devCluster({ web: folderHash(sandbox.project), api: 'another-folder' });
  success(await runCommand(['restart'], { sandbox, handler: cluster.handler }));
  assert.deepEqual(cluster.patched, ['web-devtool']);

  const idle = devCluster({});
  assert.equal(
    failure(await runCommand(['restart'], { sandbox, handler: idle.handler }), ExitCode.failure),
    "Error: no dev container is active from this folder (api, web): run 'devtool up' first",
  );
  assert.deepEqual(idle.patched, []);
});

test('one active from another folder is not restarted from this one', async () => {
  const sandbox = project(['api']);
  const cluster = devCluster({ api: 'another-folder' });
  assert.equal(
    failure(await runCommand(['restart', 'api'], { sandbox, handler: cluster.handler }), ExitCode.failure),
    "Error: no dev container is active for api from this folder (it is active from another folder or machine): run 'devtool up api' first",
  );
  assert.deepEqual(cluster.patched, []);
});

test('an unknown dev container or context: a usage error, no cluster asked', async () => {
  const sandbox = project(['api']);
  assert.match(failure(await runCommand(['restart', 'web'], { sandbox }), ExitCode.usage), /has no services entry "web"/);
  assert.match(
    failure(await runCommand(['restart', '--context', 'gamma'], { sandbox }), ExitCode.usage),
    /--context: unknown context "gamma" \(known: alpha, beta\)/,
  );
});
