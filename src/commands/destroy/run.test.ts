import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import type { Factory } from '../../factory.ts';
import { ENVIRONMENT_LABEL } from '../../kube/labels.ts';
import { commandSandbox, failure, fakeKubeClient, runCommand, success } from '../../../test/command-harness.ts';

const notFound = () => Object.assign(new Error('not found'), { code: 404 });

interface Stored {
  resource: string;
  name: string;
  environment: string;
}

/**
 * A namespace of labelled objects, as destroy sees it: the discovery of the kinds it may list and
 * delete, the lists by label (getJson), the deletes (objects.delete), and the environment's record
 * (a ConfigMap). It records the targets asked and what was deleted.
 */
function namespaceOf(objects: Stored[], recorded: string[] = []) {
  const targets: string[] = [];
  const deleted: string[] = [];
  const records = new Set(recorded);
  const resources: Record<string, { kind: string; resource: string }[]> = {
    '/api/v1': [
      { kind: 'Service', resource: 'services' },
      { kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims' },
    ],
    '/apis/apps/v1': [{ kind: 'Deployment', resource: 'deployments' }],
  };
  const getJson = async (path: string) => {
    if (path === '/apis') return { groups: [{ name: 'apps', preferredVersion: { groupVersion: 'apps/v1' } }] };
    const kinds = resources[path];
    if (kinds) {
      const groupVersion = path === '/api/v1' ? 'v1' : path.replace('/apis/', '');
      return { groupVersion, resources: kinds.map((k) => ({ name: k.resource, kind: k.kind, namespaced: true, verbs: ['list', 'delete'] })) };
    }
    const [, resource, selector] = /\/([a-z]+)\?labelSelector=(.*)$/.exec(path) ?? [];
    const environment = decodeURIComponent(selector ?? '').replace(`${ENVIRONMENT_LABEL}=`, '');
    return { items: objects.filter((o) => o.resource === resource && o.environment === environment).map((o) => ({ metadata: { name: o.name } })) };
  };
  const kube: Factory['kube'] = async (target) => {
    targets.push(`${target.context.name}/${target.namespace}`);
    return fakeKubeClient(target, {
      getJson,
      objects: {
        delete: async (o: { kind: string; metadata: { name: string } }) => {
          deleted.push(`${o.kind}/${o.metadata.name}`);
          objects = objects.filter((x) => x.name !== o.metadata.name);
        },
        patch: async () => undefined,
      },
      core: {
        readNamespacedConfigMap: async ({ name }: { name: string }) => {
          if (!records.has(name)) throw notFound();
          return { data: { name: name.replace('devtool-env-', ''), status: 'deployed' } };
        },
        deleteNamespacedConfigMap: async ({ name }: { name: string }) => {
          if (!records.delete(name)) throw notFound();
        },
        deleteNamespacedSecret: async () => {
          throw notFound();
        },
      },
    });
  };
  return { kube, targets, deleted, records };
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
  const r = success(await runCommand(['destroy'], { kube: ns.kube }));
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
  const r = success(await runCommand(['destroy', '--name', 'shop', '--volumes', '-c', 'beta', '-n', 'n1'], { kube: ns.kube }));
  assert.deepEqual(ns.deleted, ['Deployment/api', 'PersistentVolumeClaim/db']);
  assert.match(r.stderr, /environment shop destroyed in namespace n1 \(2 objects deleted\)/);
  assert.deepEqual(ns.targets, ['beta/n1']);
});

test('nothing there: said, exit 0', async () => {
  const ns = namespaceOf([]);
  const r = success(await runCommand(['destroy'], { kube: ns.kube }));
  assert.match(r.stderr, /nothing to destroy: no environment project in namespace default/);
});

test("the manifest's name and dependencies: its environment, and a line on the dependencies left", async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'name: movies\ndependencies:\n  Payments:\n    repository: https://git.example.com/acme/payments.git\n');
  const ns = namespaceOf([{ resource: 'deployments', name: 'web', environment: 'movies' }]);
  const r = success(await runCommand(['destroy'], { sandbox, kube: ns.kube }));
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
