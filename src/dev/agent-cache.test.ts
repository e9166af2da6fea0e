import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { agentMissing } from './agent-cache.ts';

const status = (s: { reason: string; message: string }, where: 'state' | 'lastState' | 'waiting'): V1Pod => ({
  status: {
    containerStatuses: [
      {
        name: 'app',
        ready: false,
        restartCount: 1,
        image: 'i',
        imageID: '',
        ...(where === 'waiting' ? { state: { waiting: s } } : { [where]: { terminated: { exitCode: 128, ...s } } }),
      },
    ],
  },
});

test('a dev container that cannot exec the agent is told from any other start error', () => {
  const noAgent = {
    reason: 'StartError',
    message: 'failed to create containerd task: ... exec: "/devtool/bin/devtool-agent": stat /devtool/bin/devtool-agent: no such file or directory: unknown',
  };
  assert.equal(agentMissing(status({ ...noAgent, reason: 'RunContainerError' }, 'waiting')), true, 'as the runtime first reports it');
  assert.equal(agentMissing(status(noAgent, 'state')), true);
  assert.equal(agentMissing(status(noAgent, 'lastState')), true, 'seen again in CrashLoopBackOff');
  assert.equal(agentMissing(status({ reason: 'StartError', message: 'exec: "/bin/app": permission denied' }, 'state')), false);
  assert.equal(agentMissing(status({ reason: 'Error', message: '/devtool/bin/devtool-agent: bad flag' }, 'state')), false);
  assert.equal(agentMissing({ status: { phase: 'Pending' } }), false);
});
