import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { peerView } from './peers.ts';

const pod = (name: string, hostIP: string, ready = true, deleting = false): V1Pod => ({
  metadata: { name, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
  status: { hostIP, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

test('alone, a front door shows its own address and writes status', () => {
  assert.deepEqual(peerView([], { name: 'fd-b', address: '192.0.2.3' }), { addresses: ['192.0.2.3'], publishes: true });
});

test('a front door shows its own node and every ready one; only the first by name writes', () => {
  // fd-b is starting: it serves already (its own view counts it), the others do not count it yet.
  const pods = [pod('fd-b', '192.0.2.3', false), pod('fd-a', '192.0.2.2'), pod('fd-c', '192.0.2.4')];
  assert.deepEqual(peerView(pods, { name: 'fd-b', address: '192.0.2.3' }), { addresses: ['192.0.2.2', '192.0.2.3', '192.0.2.4'], publishes: false });
  assert.deepEqual(peerView(pods, { name: 'fd-a', address: '192.0.2.2' }), { addresses: ['192.0.2.2', '192.0.2.4'], publishes: true });
  assert.deepEqual(peerView(pods, { name: 'fd-c', address: '192.0.2.4' }).publishes, false);
});

test('a front door that is not ready or is going away counts for neither', () => {
  const pods = [pod('fd-a', '192.0.2.2', true, true), pod('fd-0', '192.0.2.9', false)];
  assert.deepEqual(peerView(pods, { name: 'fd-b', address: '192.0.2.3' }), { addresses: ['192.0.2.3'], publishes: true });
});
