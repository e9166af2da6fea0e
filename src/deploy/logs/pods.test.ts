import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { byServiceThenName, chosenServices, ownerWorkload, podService, startedContainers, waitingContainers, workloadService } from './pods.ts';

const running = (name: string, id: string) => ({ name, containerID: `containerd://${id}`, state: { running: { startedAt: new Date(0) } } });

function pod(
  name: string,
  o: { service?: string; owner?: [string, string]; hash?: string; containers?: string[]; statuses?: object[]; phase?: string } = {},
): V1Pod {
  return {
    metadata: {
      name,
      labels: { ...(o.service ? { 'devtool.dev/service': o.service } : {}), ...(o.hash ? { 'pod-template-hash': o.hash } : {}) },
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: o.owner[0], name: o.owner[1], uid: 'u', controller: true }] } : {}),
    },
    spec: { containers: (o.containers ?? ['main']).map((c) => ({ name: c })) },
    status: { phase: o.phase ?? 'Running', containerStatuses: (o.statuses ?? []) as never },
  };
}

test('the service of a pod: the devtool label, else its workload (a Deployment without the template hash), else the pod', () => {
  assert.equal(podService(pod('web-5d9c7-x2k4p', { service: 'web', owner: ['ReplicaSet', 'web-5d9c7'], hash: '5d9c7' })), 'web');
  assert.equal(podService(pod('api-6b8f4d-q7z', { owner: ['ReplicaSet', 'api-6b8f4d'], hash: '6b8f4d' })), 'api');
  assert.equal(podService(pod('db-0', { owner: ['StatefulSet', 'db'] })), 'db');
  assert.equal(podService(pod('migrate-h2x8k', { owner: ['Job', 'migrate'] })), 'migrate');
  assert.equal(podService(pod('lonely')), 'lonely');
  // A ReplicaSet whose name does not end with the hash (made by hand) keeps its name.
  assert.equal(ownerWorkload(pod('rs-abc', { owner: ['ReplicaSet', 'rs'], hash: 'zzz' })), 'rs');
  assert.equal(ownerWorkload(pod('p')), undefined);
});

test('the services asked for: as the pods carry them, a Compose name made a Kubernetes one; an unknown one names those that exist', () => {
  assert.deepEqual([...chosenServices(['web', 'my_db'], ['web', 'my-db', 'web', 'cache'], 'environment shop in namespace dev')], ['web', 'my-db']);
  assert.throws(
    () => chosenServices(['wbe'], ['web', 'cache'], 'environment shop in namespace dev'),
    /^DevtoolError: no service "wbe" in environment shop in namespace dev; its services: cache, web$/,
  );
  assert.throws(() => chosenServices(['web'], [], 'environment shop in namespace dev'), /it has no services \(deploy it with 'devtool deploy'\)$/);
  assert.equal(workloadService({ name: 'web', labels: { 'devtool.dev/service': 'front' } }), 'front');
  assert.equal(workloadService({ name: 'web', labels: {} }), 'web');
});

test('started containers have a log, one entry per run; waiting ones say why', () => {
  const p = pod('web-1', {
    service: 'web',
    containers: ['main', 'sidecar', 'late'],
    statuses: [
      running('main', 'a1'),
      { name: 'sidecar', containerID: 'containerd://b1', state: { terminated: { exitCode: 1 } } },
      { name: 'late', state: { waiting: { reason: 'ImagePullBackOff' } } },
    ],
  });
  assert.deepEqual(startedContainers(p), [
    { service: 'web', pod: 'web-1', container: 'main', runId: 'containerd://a1', several: true },
    { service: 'web', pod: 'web-1', container: 'sidecar', runId: 'containerd://b1', several: true },
  ]);
  assert.deepEqual(waitingContainers(p), [{ container: 'late', reason: 'ImagePullBackOff' }]);
  const pending = pod('web-2', { phase: 'Pending' });
  assert.deepEqual(startedContainers(pending), []);
  assert.deepEqual(waitingContainers(pending), [{ container: 'main', reason: 'Pending' }]);
  assert.equal(startedContainers(pod('one', { statuses: [running('main', 'c')] }))[0]!.several, false);
});

test('pods start in the order of their service, then their name', () => {
  const pods = [pod('web-b', { service: 'web' }), pod('api-z', { service: 'api' }), pod('web-a', { service: 'web' })];
  assert.deepEqual(
    pods.sort(byServiceThenName).map((p) => p.metadata!.name),
    ['api-z', 'web-a', 'web-b'],
  );
});
