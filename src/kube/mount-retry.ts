/**
 * A pod the kubelet gave up mounting for ten seconds over a moment's failure.
 *
 * When the kubelet first sees a pod, its volume manager reads the pod's claims from the API
 * server. The node authorizer lets it read a claim only once the authorizer's own graph links the
 * claim, through the pod, to the node, and that graph is fed by a watch of its own: for a few
 * milliseconds after the pod is bound it may not know yet. A read in those milliseconds is refused
 * (`User "system:node:…" cannot get resource "persistentvolumeclaims"`), the kubelet records a
 * FailedMount event ("failed to process volumes=[…]"), and its pod worker backs off for 10 s
 * (kubelet's backOffPeriod). The volume manager itself asks again 100 ms later and succeeds, but
 * the pod waits out the back-off: a dev pod that takes 12 s instead of 1.5 s (seen in 3 of some
 * 800 dev pod starts on the local cluster).
 *
 * Any change of a pod's annotations makes the kubelet sync the pod at once (its pod config sees an
 * update, which ends the back-off), so `up` answers such an event by setting one annotation.
 */
import * as k8s from '@kubernetes/client-node';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from './client.ts';
import { describeKubeError } from './config.ts';

/** The annotation whose change asks the kubelet to sync the pod again; its value counts the asks. */
export const MOUNT_RETRY_ANNOTATION = 'devtool.dev/mount-retry';

/** The kubelet's event when reading the pod's volumes failed early, not when a mount is merely slow. */
const VOLUMES_NOT_PROCESSED = /failed to process volumes=\[[^\]]/;

/** More asks than this mean the failure is not a moment's: the kubelet's own retries and the event tell it. */
export const MAX_RETRIES = 5;

/** Whether the pod waits for the kubelet to start it: bound to a node, no container started yet, not ending. */
export function waitsForKubelet(pod: V1Pod): boolean {
  if (!pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return false;
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return !statuses.some((c) => c.state?.running || c.state?.terminated || c.lastState?.terminated);
}

/**
 * The kubelet's failure to read this pod's volumes that came after the last ask, if any: the
 * FailedMount events of this pod (its uid: a pod of the same name may have come before) whose
 * count is above the one already answered. Pure: `answered` maps an event's uid to its count then.
 */
export function unansweredMountFailure(pod: V1Pod, events: readonly CoreV1Event[], answered: ReadonlyMap<string, number>): CoreV1Event | undefined {
  const uid = pod.metadata?.uid;
  return events.find(
    (e) =>
      e.reason === 'FailedMount' &&
      e.involvedObject.uid === uid &&
      VOLUMES_NOT_PROCESSED.test(e.message ?? '') &&
      (e.count ?? 1) > (answered.get(e.metadata.uid ?? '') ?? 0),
  );
}

/** The part of the kubelet's message that says why, for devtool.log: what comes after "error processing …:". */
export function mountFailureReason(message: string): string {
  const why = /error processing [^:]+: (.*)$/.exec(message)?.[1] ?? message;
  return why.length > 200 ? `${why.slice(0, 200)}…` : why;
}

/**
 * How long after `up` first sees a pod bound it starts reading the pod's events. The kubelet fails
 * within some 50 ms of the binding; a normal dev pod starts in 0.5 to 1 s, so reading from 300 ms
 * costs one or two event reads on a normal start, and answers a refused one 0.3 s after it was seen.
 */
export const BOUND_FOR_MS = 300;

/**
 * Watches one wait for pods to start: for a pod the kubelet backed off from over a failure to read
 * its volumes, changes its MOUNT_RETRY_ANNOTATION so the kubelet tries again at once. `check` is
 * called on each poll with the pods of the wait; it reads events only for a pod still waiting for
 * the kubelet BOUND_FOR_MS after this wait first saw it bound, and asks at most MAX_RETRIES times per
 * pod.
 */
export class MountRetry {
  private readonly answered = new Map<string, number>();
  private readonly asked = new Map<string, number>();
  /** When this wait first saw each pod bound (its own clock: the API server's is to the second). */
  private readonly seenBound = new Map<string, number>();

  constructor(
    private readonly client: Pick<KubeClient, 'core' | 'namespace'>,
    private readonly log: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  async check(pods: readonly V1Pod[]): Promise<void> {
    for (const pod of pods) {
      const uid = pod.metadata?.uid ?? '';
      if (!waitsForKubelet(pod) || (this.asked.get(uid) ?? 0) >= MAX_RETRIES || !this.boundLongEnough(uid)) continue;
      try {
        await this.retryIfRefused(pod, uid);
      } catch (err) {
        // Not allowed to read events or patch pods, say: the kubelet's own back-off still starts it.
        this.asked.set(uid, MAX_RETRIES);
        this.log(`pod ${pod.metadata?.name}: not asking the kubelet to retry its volumes: ${describeKubeError(err)}`);
      }
    }
  }

  private async retryIfRefused(pod: V1Pod, uid: string): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const events = await this.client.core.listNamespacedEvent({
      namespace: this.client.namespace,
      fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name},reason=FailedMount`,
    });
    const failure = unansweredMountFailure(pod, events.items, this.answered);
    if (!failure) return;
    this.answered.set(failure.metadata.uid ?? '', failure.count ?? 1);
    const count = (this.asked.get(uid) ?? 0) + 1;
    this.asked.set(uid, count);
    this.log(
      `pod ${name}: the kubelet could not read its volumes yet (${mountFailureReason(failure.message ?? '')}); ` +
        'asking it to try again now instead of after its 10 s back-off',
    );
    await this.client.core.patchNamespacedPod(
      { name, namespace: this.client.namespace, body: { metadata: { annotations: { [MOUNT_RETRY_ANNOTATION]: String(count) } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  }

  /** Reading events for a pod bound just now would cost a call on every start, before the kubelet could even fail. */
  private boundLongEnough(uid: string): boolean {
    const seen = this.seenBound.get(uid);
    if (seen === undefined) {
      this.seenBound.set(uid, this.now());
      return false;
    }
    return this.now() - seen >= BOUND_FOR_MS;
  }
}
