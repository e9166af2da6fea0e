import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { agentFromClaim, movedLine, refusedLine, unschedulableDevClaim } from './drained-volume.ts';
import { AGENT_BIN_DIR, DATA_VOLUME } from './mirror.ts';

const UNSCHEDULABLE = {
  type: 'PodScheduled',
  status: 'False',
  reason: 'Unschedulable',
  message: '0/2 nodes are available: 1 node(s) had volume node affinity conflict, 1 node(s) were unschedulable.',
};
const pod = (o: { claim?: string; node?: string; scheduled?: boolean; deleting?: boolean }): V1Pod => ({
  metadata: { name: 'api-devtool-1', ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
  spec: {
    containers: [],
    ...(o.node ? { nodeName: o.node } : {}),
    volumes: [{ name: DATA_VOLUME, ...(o.claim ? { persistentVolumeClaim: { claimName: o.claim } } : { emptyDir: {} }) }],
  },
  status: { conditions: o.scheduled === false ? [UNSCHEDULABLE] : [] },
});

test('the dev claim of a dev pod the scheduler turns down', () => {
  assert.equal(unschedulableDevClaim([pod({ claim: 'api-devtool', scheduled: false })]), 'api-devtool');
  assert.equal(unschedulableDevClaim([pod({ claim: 'api-devtool', node: 'n1' })]), undefined, 'scheduled');
  assert.equal(unschedulableDevClaim([pod({ claim: 'api-devtool' })]), undefined, 'not turned down (yet)');
  assert.equal(unschedulableDevClaim([pod({ scheduled: false })]), undefined, 'an emptyDir: nothing stranded');
  assert.equal(unschedulableDevClaim([pod({ claim: 'api-devtool', scheduled: false, deleting: true })]), undefined, 'ending');
  assert.equal(unschedulableDevClaim([]), undefined);
});

test('one line for what was done, one naming the node and what to run', () => {
  const s = { node: 'n2', volume: 'pvc-1' };
  assert.equal(
    movedLine('api', s),
    'the dev volume of api was on node n2, which is drained: a new one on another node, filled from this folder ' +
      '(the old one is kept as volume pvc-1 on n2, with any file only it held)',
  );
  const refused = refusedLine('api', s, 'no right to patch PersistentVolumes');
  assert.match(refused, /node n2, which is drained/);
  assert.match(refused, /kubectl uncordon n2/);
  assert.match(refused, /devtool down api --volumes/);
  assert.doesNotMatch(refused, /\n/);
});

test('a dev pod that runs the agent kept on its claim: the new claim has none, and the line says to run up again', () => {
  const fromClaim = pod({ claim: 'api-devtool', scheduled: false });
  fromClaim.spec!.containers = [{ name: 'dev', volumeMounts: [{ name: DATA_VOLUME, mountPath: AGENT_BIN_DIR, subPath: 'state/agent-x', readOnly: true }] }];
  assert.equal(agentFromClaim(fromClaim), true);
  const installed = pod({ claim: 'api-devtool', scheduled: false });
  installed.spec!.containers = [
    {
      name: 'dev',
      volumeMounts: [
        { name: 'devtool-bin', mountPath: AGENT_BIN_DIR },
        { name: DATA_VOLUME, mountPath: '/var/devtool' },
      ],
    },
  ];
  assert.equal(agentFromClaim(installed), false);
  assert.match(
    movedLine('api', { node: 'n2', volume: 'pvc-1' }, true),
    /with any file only it held\); the agent was kept on the old one: stop this `up` and run it again to copy it in$/,
  );
  assert.doesNotMatch(movedLine('api', { node: 'n2', volume: 'pvc-1' }), /agent/);
});
