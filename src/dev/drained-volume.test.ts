import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.ts';
import { agentFromClaim, DrainedVolume, movedLine, refusedLine, unschedulableDevClaim } from './drained-volume.ts';
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

/** A fake of the few calls DrainedVolume makes, recording the writes; `forbidden` names the calls that answer 403. */
function fakeClient(o: { forbidden?: string[] } = {}) {
  const writes: string[] = [];
  const deny = (call: string) => {
    if (o.forbidden?.includes(call)) throw Object.assign(new Error(`${call} forbidden`), { code: 403 });
  };
  let claimGone = false;
  const claim = {
    metadata: { name: 'api-devtool', annotations: { 'volume.kubernetes.io/selected-node': 'n2' } },
    spec: { volumeName: 'pvc-1', storageClassName: 'local-path' },
  };
  const core = {
    readNamespacedPersistentVolumeClaim: async () => {
      if (claimGone) throw Object.assign(new Error('not found'), { code: 404 });
      return claim;
    },
    readPersistentVolume: async () => {
      deny('readPersistentVolume');
      return {
        spec: {
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] }] } },
        },
      };
    },
    listNode: async () => ({
      items: [
        { metadata: { name: 'n1' }, spec: {} },
        { metadata: { name: 'n2' }, spec: { unschedulable: true } },
      ],
    }),
    patchPersistentVolume: async (a: { name: string; body: unknown }) => {
      deny('patchPersistentVolume');
      writes.push(`patch pv ${a.name} ${JSON.stringify(a.body)}`);
    },
    deleteNamespacedPersistentVolumeClaim: async (a: { name: string }) => {
      writes.push(`delete claim ${a.name}`);
      claimGone = true;
    },
    createNamespacedPersistentVolumeClaim: async (a: { body: { metadata: { name: string; annotations?: object }; spec: { volumeName?: string } } }) => {
      writes.push(
        `create claim ${a.body.metadata.name} volume=${a.body.spec.volumeName ?? 'none'} annotations=${JSON.stringify(a.body.metadata.annotations ?? {})}`,
      );
    },
    listNamespacedPod: async () => ({ items: [pod({ claim: 'api-devtool', scheduled: false })] }),
    deleteNamespacedPod: async (a: { name: string }) => {
      writes.push(`delete pod ${a.name}`);
    },
  };
  return { client: { core, namespace: 'team' } as unknown as KubeClient, writes };
}

async function offered(client: KubeClient): Promise<string[]> {
  const notices: string[] = [];
  const d = new DrainedVolume({ client, devName: 'api', notice: (m) => notices.push(m), log: () => undefined });
  const waiting = pod({ claim: 'api-devtool', scheduled: false });
  waiting.status!.conditions![0]!.message = '0/2 nodes are available: 1 node(s) had volume node affinity conflict, 1 node(s) were unschedulable.';
  d.offer([waiting]);
  d.offer([waiting]); // a second redial while the first check runs: nothing more
  await new Promise((r) => setTimeout(r, 50));
  d.offer([waiting]); // and once told: nothing more either
  await new Promise((r) => setTimeout(r, 50));
  return notices;
}

test('a claim stranded on a drained node: the volume kept (Retain), the claim made anew unbound, the waiting pod started over', async () => {
  const { client, writes } = fakeClient();
  const notices = await offered(client);
  assert.deepEqual(writes, [
    'patch pv pvc-1 {"spec":{"persistentVolumeReclaimPolicy":"Retain"}}',
    'delete claim api-devtool',
    'create claim api-devtool volume=none annotations={}',
    'delete pod api-devtool-1',
  ]);
  assert.deepEqual(notices, [movedLine('api', { node: 'n2', volume: 'pvc-1' })]);
});

test('the volume cannot be kept aside: nothing deleted, the node and what to run said once', async () => {
  const { client, writes } = fakeClient({ forbidden: ['patchPersistentVolume'] });
  const notices = await offered(client);
  assert.deepEqual(writes, []);
  assert.deepEqual(notices, [refusedLine('api', { node: 'n2', volume: 'pvc-1' }, 'no right to patch PersistentVolumes')]);
});

test("a namespace's role that reads no PersistentVolume: the scheduler's words and the claim's node, said once, nothing deleted", async () => {
  const { client, writes } = fakeClient({ forbidden: ['readPersistentVolume'] });
  const notices = await offered(client);
  assert.deepEqual(writes, []);
  assert.deepEqual(notices, [refusedLine('api', { node: 'n2', volume: 'pvc-1' }, 'no right to read nodes or PersistentVolumes')]);
});
