/**
 * A pod the scheduler cannot place yet. Some reasons pass by themselves and are waited out: a node
 * that is not ready for a moment (a busy kubelet missing its heartbeat, a node restarting), or a
 * cluster autoscaler adding a node for the pod. Only what lasts is a failure, reported with the
 * scheduler's own words instead of a timeout. Claims waiting to bind are claims.ts's.
 */
import type { CoreV1Event, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { KubeClient } from './client.ts';

/**
 * How long a lasting reason (too little CPU, no node matching a selector) may stand before it is a
 * failure: the window an autoscaler has to react. cluster-autoscaler looks every 10 s and then
 * records TriggeredScaleUp on the pod; Karpenter records Nominated.
 */
export const AUTOSCALER_GRACE_MS = 15_000;

/** Node taints that the node lifecycle controller sets and lifts by itself. */
const PASSING_TAINTS = [
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.kubernetes.io/network-unavailable',
  'node.cloudprovider.kubernetes.io/uninitialized',
];

/** Autoscalers' pod events saying a node is on its way for this pod. */
const SCALE_UP_EVENTS = ['TriggeredScaleUp', 'Nominated'];

/** The pod's PodScheduled condition while the scheduler turns it down, if it does. */
export function unschedulableCondition(pod: V1Pod): V1PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
}

/**
 * Pure: the per-node reasons of a scheduler message, e.g. "0/3 nodes are available: 1 Insufficient
 * cpu, 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: ..." gives
 * ["Insufficient cpu", "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"].
 */
export function nodeReasons(message: string): string[] {
  const listed = /^0\/\d+ nodes are available: (.*?)\.(?: preemption:|$)/.exec(message.trim());
  if (!listed) return [];
  return listed[1]!.split(', ').map((r) => r.replace(/^\d+ /, ''));
}

/**
 * Pure: whether the scheduler waits only for what passes by itself: every node it turned down is
 * not ready, unreachable or not initialised yet, or the cluster has no node at the moment.
 */
export function waitsForNodes(message: string): boolean {
  if (/^no nodes available to schedule pods/.test(message.trim())) return true;
  const reasons = nodeReasons(message);
  return reasons.length > 0 && reasons.every((r) => PASSING_TAINTS.some((t) => r.startsWith(`node(s) had untolerated taint {${t}:`)));
}

export type SchedulingVerdict = { state: 'waiting'; detail: string } | { state: 'failed'; reason: string };

/**
 * Pure: what an unschedulable condition means at `now`. Waiting while the nodes come back, and for
 * the autoscaler's window; a failure after that, unless `scalingUp` (an autoscaler said it adds a
 * node). The window runs from the condition's transition, the API server's clock: a skewed local
 * clock shortens or lengthens it, never past the caller's own timeout.
 */
export function schedulingVerdict(condition: V1PodCondition, now: number, scalingUp: boolean): SchedulingVerdict {
  const message = (condition.message ?? 'unschedulable').trim();
  if (waitsForNodes(message)) return { state: 'waiting', detail: `waiting for a ready node: ${message}` };
  if (scalingUp) return { state: 'waiting', detail: `the cluster autoscaler is adding a node: ${message}` };
  const since = condition.lastTransitionTime ? new Date(condition.lastTransitionTime).getTime() : now;
  if (now - since < AUTOSCALER_GRACE_MS) return { state: 'waiting', detail: `waiting to be scheduled: ${message}` };
  return { state: 'failed', reason: `pod cannot be scheduled: ${message}` };
}

/** Pure: whether the pod's events say an autoscaler is adding a node for it. */
export function scaleUpRecorded(events: CoreV1Event[]): boolean {
  return events.some((e) => SCALE_UP_EVENTS.includes(e.reason ?? ''));
}

/** The verdict on an unschedulable pod, asking its events only once the verdict depends on them. */
export async function podSchedulingVerdict(client: KubeClient, pod: V1Pod, condition: V1PodCondition, now = Date.now()): Promise<SchedulingVerdict> {
  const plain = schedulingVerdict(condition, now, false);
  if (plain.state === 'waiting') return plain;
  const events = await client.core.listNamespacedEvent({
    namespace: client.namespace,
    fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${pod.metadata?.name ?? ''}`,
  });
  return schedulingVerdict(condition, now, scaleUpRecorded(events.items));
}
