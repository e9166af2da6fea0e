import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { freshClaim, strandedOn, volumeNodes } from './stranded-volume.ts';

// A volume as the local-path provisioner writes it: bound to the node it was made on.
const onNode = (...values: string[]): V1PersistentVolume => ({
  spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values }] }] } } },
});
const node = (name: string, unschedulable?: boolean): V1Node => ({ metadata: { name }, spec: unschedulable === undefined ? {} : { unschedulable } });

test('the nodes a volume is bound to: hostnames only, every term', () => {
  assert.deepEqual(volumeNodes(onNode('n2')), ['n2']);
  assert.equal(volumeNodes({ spec: {} }), undefined, 'no affinity: any node');
  const zone: V1PersistentVolume = {
    spec: {
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] }] } },
    },
  };
  assert.equal(volumeNodes(zone), undefined, 'a zone: any of its nodes');
  const oneOpen = onNode('n2');
  oneOpen.spec!.nodeAffinity!.required!.nodeSelectorTerms.push(zone.spec!.nodeAffinity!.required!.nodeSelectorTerms[0]!);
  assert.equal(volumeNodes(oneOpen), undefined, 'terms are ORed: one open term frees it');
  const byField: V1PersistentVolume = {
    spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n3'] }] }] } } },
  };
  assert.deepEqual(volumeNodes(byField), ['n3']);
});

test('stranded: every node of the volume cordoned or gone', () => {
  assert.equal(strandedOn(onNode('n2'), [node('n1'), node('n2', true)]), 'n2', 'cordoned');
  assert.equal(strandedOn(onNode('n2'), [node('n1')]), 'n2', 'gone from the cluster');
  assert.equal(strandedOn(onNode('n2'), [node('n1'), node('n2', false)]), undefined, 'uncordoned');
  assert.equal(strandedOn(onNode('n2'), [node('n1'), node('n2')]), undefined);
  assert.equal(strandedOn(onNode('n2', 'n3'), [node('n2', true), node('n3')]), undefined, 'another of its nodes takes pods');
  assert.equal(strandedOn({ spec: {} }, [node('n1', true)]), undefined, 'not node-bound');
});

test('a fresh claim: same name, labels, class and size; unbound, without the provisioner notes', () => {
  const old: V1PersistentVolumeClaim = {
    metadata: {
      name: 'api-devtool',
      namespace: 'team',
      uid: 'u1',
      resourceVersion: '42',
      finalizers: ['kubernetes.io/pvc-protection'],
      labels: { 'app.kubernetes.io/managed-by': 'devtool' },
      annotations: {
        'pv.kubernetes.io/bind-completed': 'yes',
        'volume.kubernetes.io/selected-node': 'n2',
        'volume.beta.kubernetes.io/storage-provisioner': 'rancher.io/local-path',
        'devtool.dev/agent-installed': 'agent-x',
        'devtool.dev/other': 'kept',
      },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '5Gi' } },
      storageClassName: 'local-path',
      volumeMode: 'Filesystem',
      volumeName: 'pvc-1',
    },
    status: { phase: 'Bound' },
  };
  assert.deepEqual(freshClaim(old, ['devtool.dev/agent-installed']), {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'api-devtool', labels: { 'app.kubernetes.io/managed-by': 'devtool' }, annotations: { 'devtool.dev/other': 'kept' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } }, storageClassName: 'local-path', volumeMode: 'Filesystem' },
  });
  assert.equal(freshClaim({ metadata: { name: 'x' }, spec: {} }).spec?.storageClassName, undefined, 'the default class stays the default');
});
