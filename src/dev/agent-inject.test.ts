import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { AgentCopies } from './agent-inject.ts';
import { AGENT_PATH, waitingForAgent } from './mirror.ts';

const NO_SHELL = 'failed to create containerd task: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown';

function pod(name: string, spec: string, reason?: string): V1Pod {
  return {
    metadata: { name, annotations: { 'devtool.dev/dev-spec-hash': spec } },
    spec: { containers: [{ name: 'api', image: 'scratch-app:1', command: waitingForAgent([AGENT_PATH, 'supervise']) }] },
    status: {
      containerStatuses: [
        {
          name: 'api',
          image: 'scratch-app:1',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: reason ? { waiting: { reason, message: NO_SHELL } } : { waiting: { reason: 'ContainerCreating' } },
        },
      ],
    },
  };
}

function copies(): AgentCopies {
  const client = {} as KubeClient;
  return new AgentCopies({ client, env: {}, context: 'team', log: () => undefined, copied: () => undefined });
}

test('a dev image without a shell is refused in one line naming what to set', () => {
  assert.throws(
    () => copies().offer([pod('api-1', 'h', 'RunContainerError')], 'h'),
    (err: Error) =>
      err instanceof DevtoolError &&
      err.message ===
        'the dev image scratch-app:1 has no shell (/bin/sh), so the agent cannot be copied into it through the Kubernetes API: set ' +
          "DEVTOOL_BIN_IMAGE to a devtool-bin image the cluster can pull, or give the context a registry ('devtool context use team --registry HOST')",
  );
});

test('pods of another spec, and pods not yet running their shell, are left alone (nothing is copied, nothing thrown)', () => {
  const c = copies();
  c.offer([pod('old-1', 'old', 'RunContainerError'), pod('api-1', 'h')], 'h');
});
