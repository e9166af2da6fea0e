import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { AGENT_EXIT_STATE_UNWRITABLE, stateUnwritable, unwritableNotice } from './unwritable-claim.ts';

const pod = (...statuses: Partial<V1ContainerStatus>[]): V1Pod => ({
  status: { containerStatuses: statuses.map((s) => ({ name: 'api', image: 'i', imageID: '', ready: false, restartCount: 0, ...s })) },
});

test('the agent stopped because its state folder is not writable: now, or at its last start', () => {
  assert.equal(AGENT_EXIT_STATE_UNWRITABLE, 73, 'agent/home.go ExitStateUnwritable');
  assert.ok(stateUnwritable(pod({ state: { terminated: { exitCode: 73, reason: 'Error' } } })));
  assert.ok(
    stateUnwritable(pod({ state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 73, reason: 'Error' } }, restartCount: 1 })),
  );
  // A sidecar's status counts as any other: only the agent exits with this code.
  assert.ok(stateUnwritable(pod({ name: 'side', state: { running: {} } }, { state: { terminated: { exitCode: 73 } } })));
});

test('any other stop, a running agent or no status yet is not an unwritable claim', () => {
  assert.equal(stateUnwritable(pod({ state: { terminated: { exitCode: 1, reason: 'Error' } } })), false);
  assert.equal(stateUnwritable(pod({ lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } }, state: { running: {} } })), false);
  assert.equal(stateUnwritable(pod({ state: { running: {} } })), false);
  assert.equal(stateUnwritable(pod({ state: { waiting: { reason: 'ContainerCreating' } } })), false);
  assert.equal(stateUnwritable({}), false);
});

test('the notice: one line, the claim and its class, what is given up and what to set', () => {
  const line = unwritableNotice('api', { metadata: { name: 'api-devtool' }, spec: { storageClassName: 'standard' } });
  assert.equal(
    line,
    "claim api-devtool (storage class standard) is not writable by the dev container's user (its storage ignores fsGroup): the dev container " +
      'keeps its files in an emptyDir instead, so they are lost when its pod restarts; for files that last, set ' +
      "services.api.persistentVolume.storageClass to a class that applies fsGroup and run 'devtool down --volumes'",
  );
  assert.doesNotMatch(line, /\n/);
  assert.match(unwritableNotice('web', { metadata: { name: 'web-devtool' }, spec: {} }), /^claim web-devtool is not writable/);
  // A Compose service has no field for its claim's class: the cluster's default decides.
  const compose = unwritableNotice('web', { metadata: { name: 'web-devtool' }, spec: { storageClassName: 'nfs' } }, true);
  assert.match(compose, /for files that last, make the cluster's default StorageClass one that applies fsGroup and run 'devtool down --volumes'$/);
  assert.doesNotMatch(compose, /persistentVolume/);
});
