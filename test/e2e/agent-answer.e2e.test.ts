/**
 * The agent asked directly (src/dev/agent-answer.ts, src/kube/port-check.ts) against the real
 * cluster: a port that speaks first is seen through the port-forward as soon as it listens, while
 * the API server still says the pod is not ready (a readiness probe holds it back here, so the
 * order does not depend on the kubelet's timing); a port that says something else is not taken
 * for the agent; a missing pod is gone. And `up` itself: it connects when its agent answers and
 * says ready only once the API server does too.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { AgentAnswer } from '../../src/dev/agent-answer.ts';
import { podPortGreeting } from '../../src/kube/port-check.ts';
import { runDevtool } from './cli.ts';
import { clusterSandbox, createSleepingDeployment, ensureAgentImage, REGISTRY, type ClusterSandbox } from './cluster.ts';
import { startUp, tearDownDev } from './up-session.ts';
import { waitFor } from './wait.ts';

let s: ClusterSandbox;
let env: NodeJS.ProcessEnv;
let folder: string;

before(async () => {
  s = await clusterSandbox('agent-answer');
  env = { ...s.env, DEVTOOL_BIN_IMAGE: ensureAgentImage() };
  folder = join(s.root, 'project');
  mkdirSync(folder);
});
after(async () => {
  await tearDownDev(s, env, [folder]);
});

/** A pod whose port 2222 answers `greeting` after `listenAfterS`, and which is ready only after `readyAfterS`. */
const speaker = (name: string, greeting: string, listenAfterS: number, readyAfterS: number): V1Pod => ({
  metadata: { name },
  spec: {
    terminationGracePeriodSeconds: 0,
    containers: [
      {
        name: 'main',
        image: `${REGISTRY}/node:20`,
        command: [
          'node',
          '-e',
          `setTimeout(() => require('net').createServer((c) => c.end(${JSON.stringify(greeting)})).listen(2222, '127.0.0.1'), ${listenAfterS * 1000});` +
            `setTimeout(() => require('fs').writeFileSync('/tmp/ready', ''), ${readyAfterS * 1000});`,
        ],
        readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 },
      },
    ],
  },
});

const client = () => ({ kc: s.kc, namespace: s.namespace });
const ready = async (name: string) =>
  (await s.core.readNamespacedPod({ name, namespace: s.namespace })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

test('the agent port is asked through the port-forward: SSH seen once it listens, before the API server says ready; others not taken', {
  timeout: 120_000,
}, async () => {
  assert.deepEqual(await podPortGreeting(client(), 'no-such-pod', 2222, 1000), { kind: 'gone' });

  await s.core.createNamespacedPod({ namespace: s.namespace, body: speaker('agent', 'SSH-2.0-e2e\r\n', 4, 60) });
  await s.core.createNamespacedPod({ namespace: s.namespace, body: speaker('stranger', 'HTTP/1.1 400 Bad Request\r\n\r\n', 0, 60) });
  const lines: string[] = [];
  const asked = new AgentAnswer({ greet: (pod) => podPortGreeting(client(), pod, 2222, 1000), log: (l) => lines.push(`agent: ${l}`) });
  asked.offer('agent');
  // Before it listens: not yet (no sandbox yet, or nothing listening), never an answer.
  const early = await podPortGreeting(client(), 'agent', 2222, 1000);
  assert.equal(early.kind, 'not-yet', JSON.stringify(early));

  const answeredPod = await Promise.race([
    asked.answered,
    new Promise<string>((_, reject) => setTimeout(() => reject(new Error('no answer in 60 s')), 60_000)),
  ]);
  assert.equal(answeredPod, 'agent');
  assert.equal(await ready('agent'), false, 'the API server does not say ready yet: the answer came from the port itself');
  const greeting = await podPortGreeting(client(), 'agent', 2222, 1000);
  assert.deepEqual(greeting, { kind: 'greeted', first: 'SSH-2.0-e2e\r\n' });

  const other = new AgentAnswer({ greet: (pod) => podPortGreeting(client(), pod, 2222, 1000), log: (l) => lines.push(`stranger: ${l}`) });
  other.offer('stranger');
  await waitFor('the stranger turned down', () => lines.some((l) => l.startsWith('stranger: ')), 60_000);
  other.stop();
  assert.match(
    lines.find((l) => l.startsWith('stranger: ')) ?? '',
    /^stranger: pod stranger: its agent port answered "HTTP\/1\.1 400 Bad Request\\r\\n\\r\\n", not SSH/,
  );
  const settled = await Promise.race([other.answered.then(() => 'answered'), new Promise((r) => setTimeout(() => r('pending'), 1000))]);
  assert.equal(settled, 'pending', 'a port that does not speak SSH is never the agent');
});

test('up connects as soon as its agent answers, and says ready only once the API server does too', { timeout: 300_000 }, async () => {
  await createSleepingDeployment(s, 'api', `${REGISTRY}/node:20`);
  writeFileSync(join(folder, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  writeFileSync(join(folder, 'hello.txt'), 'hello\n');
  const log = join(env.DEVTOOL_HOME ?? '', 'devtool.log');
  const size = () => {
    try {
      return statSync(log).size;
    } catch {
      return 0;
    }
  };
  // The API server may see the container first (the kubelet relists every second, the agent is
  // asked every 100 ms): rarely, so three tries.
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const from = size();
    const up = await startUp(['-n', s.namespace], { env, cwd: folder });
    await up.stop();
    assert.equal(runDevtool(['down', '-n', s.namespace], { env, cwd: folder }).code, 0);
    const text = readFileSync(log).subarray(from).toString('utf8');
    const answered = text.indexOf('its agent answers');
    if (answered === -1) {
      seen.push(`run ${i + 1}: the API server said ready first`);
      continue;
    }
    const connected = text.indexOf('api: connected to the dev container');
    const apiReady = text.search(/ready by the API server \d+ ms after its agent answered/);
    const readyLine = text.indexOf('dev container api-devtool is ready');
    assert.ok(connected > answered, `connected after the agent answered:\n${text}`);
    assert.ok(apiReady > answered && readyLine > apiReady, `the ready line after the API server's ready:\n${text}`);
    return;
  }
  assert.fail(`up never connected before the API server said ready: ${seen.join('; ')}`);
});
