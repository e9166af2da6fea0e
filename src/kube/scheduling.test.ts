import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PodCondition } from '@kubernetes/client-node';
import { AUTOSCALER_GRACE_MS, nodeReasons, scaleUpRecorded, schedulingVerdict, waitsForNodes } from './scheduling.ts';

// Messages as kube-scheduler v1.33 writes them (the first one from a full run of the suite).
const NOT_READY =
  '0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. ' +
  'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
const MIXED =
  '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. ' +
  'preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.';
const ALL_PASSING =
  '0/3 nodes are available: 1 node(s) had untolerated taint {node.cloudprovider.kubernetes.io/uninitialized: true}, ' +
  '2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }.';
const CUSTOM_TAINT =
  '0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
const SELECTOR = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.";

test('the per-node reasons of a scheduler message', () => {
  assert.deepEqual(nodeReasons(NOT_READY), ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }']);
  assert.deepEqual(nodeReasons(MIXED), ['Insufficient cpu', 'node(s) had untolerated taint {node.kubernetes.io/unreachable: }']);
  assert.deepEqual(nodeReasons(SELECTOR), ["node(s) didn't match Pod's node affinity/selector"]);
  assert.deepEqual(nodeReasons('something else entirely'), []);
});

test('nodes that are not ready, unreachable or uninitialised pass by themselves; anything else among the reasons does not', () => {
  assert.equal(waitsForNodes(NOT_READY), true);
  assert.equal(waitsForNodes(ALL_PASSING), true);
  assert.equal(waitsForNodes('no nodes available to schedule pods'), true);
  assert.equal(waitsForNodes(MIXED), false, 'the reachable node lacks CPU');
  assert.equal(waitsForNodes(CUSTOM_TAINT), false);
  assert.equal(waitsForNodes(SELECTOR), false);
  assert.equal(waitsForNodes('something else entirely'), false);
});

const condition = (message: string, since: number): V1PodCondition => ({
  type: 'PodScheduled',
  status: 'False',
  reason: 'Unschedulable',
  message,
  lastTransitionTime: new Date(since),
});

test('a node not ready is waited for however long it takes (the caller has the deadline)', () => {
  const v = schedulingVerdict(condition(NOT_READY, 0), 10 * 60_000, false);
  assert.deepEqual(v, { state: 'waiting', detail: `waiting for a ready node: ${NOT_READY}` });
});

test('a lasting reason fails once the autoscaler window has passed, with the scheduler message', () => {
  const t0 = Date.parse('2026-11-25T10:45:34Z');
  assert.equal(schedulingVerdict(condition(SELECTOR, t0), t0 + AUTOSCALER_GRACE_MS - 1, false).state, 'waiting');
  assert.deepEqual(schedulingVerdict(condition(SELECTOR, t0), t0 + AUTOSCALER_GRACE_MS, false), {
    state: 'failed',
    reason: `pod cannot be scheduled: ${SELECTOR}`,
  });
  assert.deepEqual(schedulingVerdict(condition(MIXED, t0), t0 + 60_000, true), {
    state: 'waiting',
    detail: `the cluster autoscaler is adding a node: ${MIXED}`,
  });
  const undated = { ...condition(SELECTOR, t0), lastTransitionTime: undefined };
  assert.equal(schedulingVerdict(undated, t0, false).state, 'waiting', 'no transition time: the window starts now');
});

test('cluster-autoscaler and Karpenter events count as a node on its way; their refusal does not', () => {
  assert.equal(scaleUpRecorded([{ reason: 'TriggeredScaleUp', involvedObject: {}, metadata: {} }]), true);
  assert.equal(scaleUpRecorded([{ reason: 'Nominated', involvedObject: {}, metadata: {} }]), true);
  assert.equal(scaleUpRecorded([{ reason: 'NotTriggerScaleUp', involvedObject: {}, metadata: {} }]), false);
  assert.equal(scaleUpRecorded([]), false);
});
