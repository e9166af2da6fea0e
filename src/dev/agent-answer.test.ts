import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PortGreeting } from '../kube/port-check.ts';
import type { V1Pod } from '@kubernetes/client-node';
import { AgentAnswer, agentCandidate, ASK_EVERY_MS, askInterval, QUICK_ASKS_MS, SLOW_ASK_EVERY_MS } from './agent-answer.ts';
import { SPEC_HASH_ANNOTATION } from './names.ts';

const ssh: PortGreeting = { kind: 'greeted', first: 'SSH-2.0-Go\r\n' };
const refused: PortGreeting = { kind: 'not-yet', why: 'connection refused' };

/** A clock that moves only when the loop sleeps, and a log of who was asked when. */
function harness(answers: (pod: string, at: number) => PortGreeting) {
  let t = 0;
  const asked: string[] = [];
  const lines: string[] = [];
  const a = new AgentAnswer({
    greet: async (pod) => {
      asked.push(`${pod}@${t}`);
      return answers(pod, t);
    },
    log: (l) => lines.push(l),
    now: () => t,
    sleep: async (ms) => {
      t += ms;
      await new Promise((r) => setImmediate(r));
    },
  });
  return { a, asked, lines, time: () => t };
}

test('asks the offered pod every 100 ms until its agent speaks SSH, and names that pod', async () => {
  const h = harness((_pod, at) => (at >= 300 ? ssh : refused));
  h.a.offer('api-devtool-1');
  assert.equal(await h.a.answered, 'api-devtool-1');
  assert.deepEqual(h.asked, ['api-devtool-1@0', 'api-devtool-1@100', 'api-devtool-1@200', 'api-devtool-1@300']);
});

test('asks nothing before a pod is offered, and nothing after stop()', async () => {
  const h = harness(() => refused);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.asked, []);
  h.a.offer('api-devtool-1');
  while (h.asked.length < 2) await new Promise((r) => setImmediate(r));
  h.a.stop();
  const n = h.asked.length;
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.ok(h.asked.length <= n + 1, `asked ${h.asked.length - n} more after stop()`);
});

test('a pod that is gone is dropped, and the next one offered is asked instead', async () => {
  const h = harness((pod) => (pod === 'old' ? { kind: 'gone' } : ssh));
  h.a.offer('old');
  while (h.asked.length < 1) await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.asked, ['old@0'], 'a gone pod is asked once');
  h.a.offer('new');
  assert.equal(await h.a.answered, 'new');
});

test('a port that answers something other than SSH is not the agent: that pod is never taken', async () => {
  const h = harness(() => ({ kind: 'greeted', first: 'HTTP/1.1 400 Bad Request\r\n' }));
  h.a.offer('api-devtool-1');
  while (h.lines.length < 1) await new Promise((r) => setImmediate(r));
  h.a.offer(undefined);
  h.a.offer('api-devtool-1');
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.equal(h.asked.length, 1);
  assert.match(h.lines[0]!, /answered "HTTP\/1\.1 400 Bad Request\\r\\n", not SSH/);
  const settled = await Promise.race([h.a.answered.then(() => 'answered'), new Promise((r) => setImmediate(() => r('pending')))]);
  assert.equal(settled, 'pending');
});

test('a failing ask counts as not yet', async () => {
  let n = 0;
  const a = new AgentAnswer({
    greet: async () => {
      if (n++ < 2) throw new Error('socket hang up');
      return ssh;
    },
    log: () => undefined,
    sleep: () => new Promise((r) => setImmediate(r)),
  });
  a.offer('p');
  assert.equal(await a.answered, 'p');
  assert.equal(n, 3);
});

test('asks slow down after the first seconds (an image pull): the API server is as quick then', () => {
  assert.equal(askInterval(0), ASK_EVERY_MS);
  assert.equal(askInterval(QUICK_ASKS_MS - 1), ASK_EVERY_MS);
  assert.equal(askInterval(QUICK_ASKS_MS), SLOW_ASK_EVERY_MS);
});

test('the pod asked is the newest of the spec on a node, not ending, with the dev container alone', () => {
  const pod = (name: string, o: { hash?: string; node?: string; at?: string; ending?: boolean; containers?: number; sidecar?: boolean } = {}): V1Pod => ({
    metadata: {
      name,
      annotations: { [SPEC_HASH_ANNOTATION]: o.hash ?? 'h1' },
      creationTimestamp: new Date(o.at ?? '2026-11-29T10:00:00Z'),
      ...(o.ending ? { deletionTimestamp: new Date() } : {}),
    },
    spec: {
      nodeName: o.node ?? 'vm',
      containers: Array.from({ length: o.containers ?? 1 }, (_, i) => ({ name: `c${i}` })),
      initContainers: [{ name: 'devtool-bin' }, ...(o.sidecar ? [{ name: 'proxy', restartPolicy: 'Always' }] : [])],
    },
  });
  assert.equal(agentCandidate([pod('a'), pod('b', { at: '2026-11-29T10:00:05Z' })], 'h1'), 'b');
  assert.equal(agentCandidate([pod('old', { hash: 'h0' }), pod('a', { at: '2026-11-29T09:00:00Z' })], 'h1'), 'a');
  assert.equal(agentCandidate([pod('a', { hash: 'h0' })], 'h1'), undefined, 'another spec');
  assert.equal(agentCandidate([pod('a', { node: '' })], 'h1'), undefined, 'not scheduled');
  assert.equal(agentCandidate([pod('a', { ending: true })], 'h1'), undefined, 'ending');
  assert.equal(agentCandidate([pod('a', { containers: 2 })], 'h1'), undefined, 'a sidecar container');
  assert.equal(agentCandidate([pod('a', { sidecar: true })], 'h1'), undefined, 'a native sidecar');
  assert.equal(agentCandidate([pod('a', { hash: 'other' })], undefined), 'a', 'no spec hash: any');
});
