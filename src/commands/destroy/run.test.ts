import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import type { DestroyApi } from '../../deploy/destroy.ts';
import { stateConfigMapName } from '../../deploy/state.ts';
import type { ResourceKind } from '../../kube/discovery.ts';
import { ENVIRONMENT_LABEL } from '../../kube/labels.ts';
import { commandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';
import { destroyHandler } from './run.ts';

interface Stored {
  resource: string;
  name: string;
  environment: string;
}

/** The kinds of the objects stored, as the cluster's discovery names them. */
const KINDS: Record<string, ResourceKind> = {
  services: { apiVersion: 'v1', kind: 'Service', resource: 'services' },
  persistentvolumeclaims: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims' },
  deployments: { apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments' },
};

/**
 * A namespace of labelled objects, as destroy sees it (DestroyApi): the objects an environment's
 * label selects, their deletes, and the environments' records (named as their ConfigMaps). It
 * records the targets asked and what was deleted.
 */
function namespaceOf(objects: Stored[], recorded: string[] = []) {
  const targets: string[] = [];
  const deleted: string[] = [];
  const records = new Set(recorded);
  const objectsApi: DestroyApi = {
    readRecord: async (environment) =>
      records.has(stateConfigMapName(environment))
        ? { name: environment, status: 'deployed', source: '', manifest: '', variables: {}, output: '', updated: '' }
        : undefined,
    writeRecord: async () => undefined,
    deleteRecord: async (environment) => {
      records.delete(stateConfigMapName(environment));
    },
    listByLabel: async (labelSelector) => {
      const environment = labelSelector.replace(`${ENVIRONMENT_LABEL}=`, '');
      return objects.filter((o) => o.environment === environment).map((o) => ({ kind: KINDS[o.resource]!, name: o.name }));
    },
    delete: async (o) => {
      deleted.push(`${o.kind.kind}/${o.name}`);
      objects = objects.filter((x) => x.name !== o.name);
    },
  };
  const handler = destroyHandler(async (_f, target) => {
    targets.push(`${target.context.name}/${target.namespace}`);
    return {
      runDestroyCommands: async ({ manifest }) => assert.deepEqual(manifest.destroy, [], 'the manifests here have no destroy commands'),
      objects: objectsApi,
    };
  });
  return { handler, targets, deleted, records };
}

test("deletes the environment's objects, workloads first, keeps its volumes, and drops its record", async () => {
  const ns = namespaceOf(
    [
      { resource: 'services', name: 'web', environment: 'project' },
      { resource: 'deployments', name: 'web', environment: 'project' },
      { resource: 'persistentvolumeclaims', name: 'data', environment: 'project' },
      { resource: 'deployments', name: 'other', environment: 'another' },
    ],
    ['devtool-env-project'],
  );
  const r = success(await runCommand(['destroy'], { handler: ns.handler }));
  assert.deepEqual(ns.deleted, ['Deployment/web', 'Service/web']);
  assert.deepEqual([...ns.records], []);
  assert.match(r.stderr, /environment project destroyed in namespace default \(2 objects deleted\)/);
  assert.match(r.stderr, /kept 1 volume\(s\): data; 'devtool destroy --volumes' deletes them/);
  assert.equal(r.stdout, '');
  assert.deepEqual(ns.targets, ['alpha/default']);
});

test('--volumes, --name, --context and --namespace', async () => {
  const ns = namespaceOf([
    { resource: 'deployments', name: 'api', environment: 'shop' },
    { resource: 'persistentvolumeclaims', name: 'db', environment: 'shop' },
  ]);
  const r = success(await runCommand(['destroy', '--name', 'shop', '--volumes', '-c', 'beta', '-n', 'n1'], { handler: ns.handler }));
  assert.deepEqual(ns.deleted, ['Deployment/api', 'PersistentVolumeClaim/db']);
  assert.match(r.stderr, /environment shop destroyed in namespace n1 \(2 objects deleted\)/);
  assert.deepEqual(ns.targets, ['beta/n1']);
});

test('nothing there: said, exit 0', async () => {
  const ns = namespaceOf([]);
  const r = success(await runCommand(['destroy'], { handler: ns.handler }));
  assert.match(r.stderr, /nothing to destroy: no environment project in namespace default/);
});

test("the manifest's name and dependencies: its environment, and a line on the dependencies left", async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'name: movies\ndependencies:\n  Payments:\n    repository: https://git.example.com/acme/payments.git\n');
  const ns = namespaceOf([{ resource: 'deployments', name: 'web', environment: 'movies' }]);
  const r = success(await runCommand(['destroy'], { sandbox, handler: ns.handler }));
  assert.match(r.stderr, /environment movies destroyed in namespace default \(1 objects deleted\)/);
  assert.match(r.stderr, /dependencies are not destroyed: payments \(each is an environment of its own/);
});

test('a bad --file, --timeout or manifest: one line before anything is destroyed', async () => {
  const sandbox = commandSandbox();
  assert.match(
    failure(await runCommand(['destroy', '--timeout', '300'], { sandbox }), ExitCode.usage),
    /invalid value "300" for flag --timeout: expected a duration with a unit/,
  );
  assert.equal(failure(await runCommand(['destroy', '--file', 'missing.yml'], { sandbox }), ExitCode.failure), 'Error: missing.yml not found');
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'name: [not, a, name]\n');
  assert.equal(failure(await runCommand(['destroy'], { sandbox }), ExitCode.failure), 'Error: devtool.yml:1:7: field name: must be a string, not a list');
});
