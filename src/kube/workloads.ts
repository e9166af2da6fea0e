/**
 * Is a workload ready, still progressing, or failed, and why. The readiness rules are kubectl's
 * `rollout status` ones; the diagnosis reads the workload's pods and events so a failure names the
 * reason a user would otherwise dig out with `kubectl describe` and `kubectl logs`.
 */
import type { CoreV1Event, V1Deployment, V1LabelSelector, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { podClaimProblem, waitsForClaims } from './claims.ts';
import { isNotFound, type KubeClient } from './client.ts';
import { podSchedulingVerdict, unschedulableCondition } from './scheduling.ts';

export type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Job';

export interface WorkloadRef {
  kind: WorkloadKind;
  name: string;
  /** Selects the workload's pods. */
  podSelector: string;
}

export type WorkloadState =
  | { state: 'ready' }
  | { state: 'completed' }
  | { state: 'progressing'; detail: string }
  | { state: 'failed'; reason: string; logTail?: string; pod?: string; image?: string }
  | { state: 'missing' };

export async function workloadState(client: KubeClient, ref: WorkloadRef): Promise<WorkloadState> {
  const ns = client.namespace;
  try {
    if (ref.kind === 'Deployment') {
      const d = await client.apps.readNamespacedDeployment({ name: ref.name, namespace: ns });
      const want = d.spec?.replicas ?? 1;
      const s = d.status ?? {};
      // Until the controller has seen this generation, the pods say nothing about it.
      if ((s.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) return { state: 'progressing', detail: 'the rollout is starting' };
      const current = await currentPodTemplate(client, d);
      const progressFailed = s.conditions?.find((c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded');
      if (progressFailed) return failedOrDiagnosed(client, ref, `rollout stalled: ${progressFailed.message ?? 'progress deadline exceeded'}`, false, current);
      const replicaFailure = s.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
      const refused = replicaFailure ? podRefusal(replicaFailure.message ?? '') : undefined;
      if (refused?.lasting) return { state: 'failed', reason: `its pods are refused: ${refused.message}` };
      if ((s.updatedReplicas ?? 0) >= want && (s.availableReplicas ?? 0) >= want && (s.replicas ?? 0) <= want) {
        return { state: 'ready' };
      }
      return diagnoseOr(
        client,
        ref,
        `${s.availableReplicas ?? 0}/${want} available${refused ? `; its pods are refused for now: ${refused.message}` : ''}`,
        current,
      );
    }
    if (ref.kind === 'StatefulSet') {
      const st = await client.apps.readNamespacedStatefulSet({ name: ref.name, namespace: ns });
      const want = st.spec?.replicas ?? 1;
      const s = st.status;
      if (
        s &&
        (s.observedGeneration ?? 0) >= (st.metadata?.generation ?? 0) &&
        (s.readyReplicas ?? 0) >= want &&
        (s.updatedReplicas ?? want) >= want &&
        (!s.updateRevision || s.currentRevision === s.updateRevision)
      ) {
        return { state: 'ready' };
      }
      const refused = await recentPodRefusal(client, 'StatefulSet', st.metadata?.uid);
      if (refused?.lasting) return { state: 'failed', reason: `its pods are refused: ${refused.message}` };
      return diagnoseOr(client, ref, `${s?.readyReplicas ?? 0}/${want} ready${refused ? `; its pods are refused for now: ${refused.message}` : ''}`);
    }
    if (ref.kind === 'DaemonSet') {
      const ds = await client.apps.readNamespacedDaemonSet({ name: ref.name, namespace: ns });
      const s = ds.status;
      const want = s?.desiredNumberScheduled ?? 0;
      if (s && (s.observedGeneration ?? 0) >= (ds.metadata?.generation ?? 0) && (s.updatedNumberScheduled ?? 0) >= want && (s.numberAvailable ?? 0) >= want) {
        return { state: 'ready' };
      }
      return diagnoseOr(client, ref, `${s?.numberAvailable ?? 0}/${want} available`);
    }
    const job = await client.batch.readNamespacedJob({ name: ref.name, namespace: ns });
    const failed = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    // A pod exiting non-zero is only an attempt; the Job has failed when it says so (retries spent).
    if (failed) return failedOrDiagnosed(client, ref, `job failed: ${failed.message ?? failed.reason ?? 'failed'}`, true);
    if ((job.status?.succeeded ?? 0) >= (job.spec?.completions ?? 1)) return { state: 'completed' };
    const refused = job.status?.active ? undefined : await recentPodRefusal(client, 'Job', job.metadata?.uid);
    if (refused?.lasting) return { state: 'failed', reason: `its pods are refused: ${refused.message}` };
    return diagnoseOr(client, ref, job.status?.active ? 'running' : `starting${refused ? `; its pods are refused for now: ${refused.message}` : ''}`);
  } catch (err) {
    if (isNotFound(err)) return { state: 'missing' };
    throw err;
  }
}

/**
 * Pure: a refusal of a workload's pods by admission, from the controller's words (a ReplicaFailure
 * condition, a FailedCreate event). `lasting`: it stays until the pod template or the namespace
 * changes (Pod Security, a quota that demands a request or limit the pods lack, a LimitRange
 * bound), so waiting is pointless; otherwise (a quota without room) it may pass as other pods go.
 */
export function podRefusal(message: string): { message: string; lasting: boolean } | undefined {
  const m = REFUSALS.exec(message.trim());
  if (!m) return undefined;
  return { message: m[1]!, lasting: !m[1]!.startsWith('exceeded quota: ') };
}

/** The words of each refusal, from where they start to the end of the message. */
const REFUSALS = new RegExp(
  `(${[
    'violates PodSecurity.*',
    'failed quota: .*',
    'exceeded quota: .*',
    '(?:minimum|maximum) \\S+ usage per (?:Container|Pod) .*',
    '\\S+ max limit to request ratio per (?:Container|Pod) .*',
  ].join('|')})$`,
  's',
);

/** Events newer than this say what the controller meets now. */
const RECENT_EVENT_MS = 2 * 60_000;

/** The newest FailedCreate event of the object (by uid: not a deleted one of the same name) that is an admission refusal, if recent. */
async function recentPodRefusal(client: KubeClient, kind: 'Job' | 'StatefulSet', uid: string | undefined): Promise<ReturnType<typeof podRefusal>> {
  if (!uid) return undefined;
  // Events are only a sharper reason: one that cannot be read (RBAC) leaves the wait as it was.
  const events = await client.core
    .listNamespacedEvent({ namespace: client.namespace, fieldSelector: `involvedObject.kind=${kind},involvedObject.uid=${uid},reason=FailedCreate` })
    .catch(() => ({ items: [] as CoreV1Event[] }));
  const last = events.items.sort((a, b) => time(a.lastTimestamp ?? a.eventTime) - time(b.lastTimestamp ?? b.eventTime)).at(-1);
  if (!last || Date.now() - time(last.lastTimestamp ?? last.eventTime) > RECENT_EVENT_MS) return undefined;
  return podRefusal(last.message ?? '');
}

/** Which pods a diagnosis reads: those of the current pod template only, or all (undefined). */
type PodFilter = ((pod: V1Pod) => boolean) | undefined;

/**
 * The pods of the Deployment's current ReplicaSet. A pod of an older one (an image that could not
 * be pulled before this deploy fixed it) is being replaced and says nothing about this rollout.
 * Undefined, so every pod is read, when the current ReplicaSet cannot be told.
 */
async function currentPodTemplate(client: KubeClient, d: V1Deployment): Promise<PodFilter> {
  const revision = d.metadata?.annotations?.[REVISION];
  const uid = d.metadata?.uid;
  if (!revision || !uid) return undefined;
  const sets = await client.apps.listNamespacedReplicaSet({ namespace: client.namespace, labelSelector: labelSelectorString(d.spec?.selector) });
  const current = sets.items.find((r) => r.metadata?.ownerReferences?.some((o) => o.uid === uid) && r.metadata?.annotations?.[REVISION] === revision);
  const hash = current?.metadata?.labels?.['pod-template-hash'];
  return hash ? (pod) => pod.metadata?.labels?.['pod-template-hash'] === hash : undefined;
}

const REVISION = 'deployment.kubernetes.io/revision';

/** A failed state, with the pod-level reason when there is a sharper one (and its log tail). */
async function failedOrDiagnosed(client: KubeClient, ref: WorkloadRef, fallback: string, jobFailed = false, only?: PodFilter): Promise<WorkloadState> {
  const found = await diagnosePods(client, ref, jobFailed, only);
  return found.failed ?? { state: 'failed', reason: fallback };
}

async function diagnoseOr(client: KubeClient, ref: WorkloadRef, detail: string, only?: PodFilter): Promise<WorkloadState> {
  const found = await diagnosePods(client, ref, false, only);
  return found.failed ?? { state: 'progressing', detail: found.waiting ? `${detail}; ${found.waiting}` : detail };
}

interface Diagnosis {
  /** A hard failure among the workload's pods. */
  failed?: Extract<WorkloadState, { state: 'failed' }>;
  /** What a pod waits for, when that says more than a count of ready replicas. */
  waiting?: string;
}

/** Looks for a hard failure among the workload's pods; nothing while things merely take time. */
async function diagnosePods(client: KubeClient, ref: WorkloadRef, jobFailed = false, only?: PodFilter): Promise<Diagnosis> {
  // The newest attempt first: its log is the one that explains the failure.
  const listed = (await client.core.listNamespacedPod({ namespace: client.namespace, labelSelector: ref.podSelector })).items;
  const pods = newestFirst(only ? listed.filter(only) : listed);
  for (const pod of pods) {
    const found = podFailure(pod, jobFailed);
    if (!found) continue;
    const logTail = found.logs ? await podLogTail(client, pod.metadata?.name ?? '', found.container, found.previous) : undefined;
    return {
      failed: {
        state: 'failed',
        reason: found.reason,
        pod: pod.metadata?.name,
        ...(found.image ? { image: found.image } : {}),
        ...(logTail ? { logTail } : {}),
      },
    };
  }
  let waiting: string | undefined;
  for (const pod of pods) {
    const name = pod.metadata?.name;
    if (waitsForClaims(pod)) {
      const claim = await podClaimProblem(client, pod);
      if (claim) return { failed: { state: 'failed', reason: `pod cannot be scheduled: ${claim}`, pod: name } };
      continue;
    }
    const unschedulable = unschedulableCondition(pod);
    if (unschedulable) {
      const verdict = await podSchedulingVerdict(client, pod, unschedulable);
      if (verdict.state === 'failed') return { failed: { state: 'failed', reason: verdict.reason, pod: name } };
      waiting ??= verdict.detail;
      continue;
    }
    const probe = await probeFailure(client, pod);
    if (probe) return { failed: { state: 'failed', reason: probe, pod: name } };
  }
  return waiting ? { waiting } : {};
}

interface PodFailure {
  reason: string;
  /** The image a pull error is about. */
  image?: string;
  container?: string;
  logs: boolean;
  previous: boolean;
}

/** Pure: the failure a pod's status shows, if any. `jobFailed`: the pod's Job has failed, so a non-zero exit is the reason. */
export function podFailure(pod: V1Pod, jobFailed: boolean): PodFailure | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const c of statuses) {
    const waiting = c.state?.waiting;
    if (waiting && ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull'].includes(waiting.reason ?? '')) {
      return {
        reason: `image pull error for ${c.image}: ${waiting.message ?? waiting.reason}`,
        image: c.image,
        container: c.name,
        logs: false,
        previous: false,
      };
    }
    // One restart is common while a dependency comes up; a loop is a loop after the second.
    if (waiting?.reason === 'CrashLoopBackOff' && (c.restartCount ?? 0) >= 2) {
      const exit = c.lastState?.terminated?.exitCode;
      return {
        reason: `crash loop: container ${c.name} keeps exiting${exit !== undefined ? ` (exit code ${exit})` : ''}`,
        container: c.name,
        logs: true,
        previous: true,
      };
    }
    if (waiting && ['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError'].includes(waiting.reason ?? '')) {
      return { reason: `container ${c.name} cannot start: ${waiting.message ?? waiting.reason}`, container: c.name, logs: false, previous: false };
    }
    const terminated = c.state?.terminated;
    if (jobFailed && terminated && terminated.exitCode !== 0) {
      return { reason: `container ${c.name} exited with code ${terminated.exitCode}`, container: c.name, logs: true, previous: false };
    }
  }
  // An unschedulable pod is diagnosePods's to judge: its claims and the scheduler's reasons may pass.
  return undefined;
}

/** A running pod that stays unready because its readiness probe fails (from the pod's events). */
async function probeFailure(client: KubeClient, pod: V1Pod): Promise<string | undefined> {
  const name = pod.metadata?.name;
  const running = pod.status?.phase === 'Running';
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  if (!name || !running || ready) return undefined;
  const events = await client.core.listNamespacedEvent({ namespace: client.namespace, fieldSelector: `involvedObject.name=${name},reason=Unhealthy` });
  const last = events.items.sort((a, b) => time(a.lastTimestamp) - time(b.lastTimestamp)).at(-1);
  // One failed check is normal while an app starts; report once the probe keeps failing.
  if (!last || (last.count ?? 1) < 3) return undefined;
  return `failed probe: ${(last.message ?? 'probe failed').trim()}`;
}

/** The pods (or any objects), the most recently created first; a copy. */
export function newestFirst<T extends { metadata?: { creationTimestamp?: Date } }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => time(b.metadata?.creationTimestamp) - time(a.metadata?.creationTimestamp));
}

/** client-node gives timestamps as Date objects (or strings from some paths): milliseconds either way. */
function time(t: Date | string | undefined): number {
  return t === undefined ? 0 : new Date(t).getTime();
}

export async function podLogTail(client: KubeClient, pod: string, container: string | undefined, previous: boolean, lines = 20): Promise<string | undefined> {
  try {
    const text = await client.core.readNamespacedPodLog({
      name: pod,
      namespace: client.namespace,
      ...(container ? { container } : {}),
      tailLines: lines,
      previous,
    });
    return String(text).trimEnd() || undefined;
  } catch {
    return undefined;
  }
}

/** A LabelSelector as the string list calls take (`a=b,c in (d,e),!f`). */
export function labelSelectorString(selector: V1LabelSelector | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/**
 * The workloads that match a label selector (Deployments, StatefulSets, DaemonSets, Jobs), each
 * with the selector of its own pods. Workloads that a controller owns (a CronJob's Jobs) are left
 * out: their owner, not the deploy, decides when they run.
 */
export async function workloadsByLabel(client: KubeClient, labelSelector: string): Promise<(WorkloadRef & { labels: Record<string, string> })[]> {
  const namespace = client.namespace;
  const [deployments, statefulSets, daemonSets, jobs] = await Promise.all([
    client.apps.listNamespacedDeployment({ namespace, labelSelector }),
    client.apps.listNamespacedStatefulSet({ namespace, labelSelector }),
    client.apps.listNamespacedDaemonSet({ namespace, labelSelector }),
    client.batch.listNamespacedJob({ namespace, labelSelector }),
  ]);
  const refs = (kind: WorkloadKind, items: { metadata?: V1ObjectMeta; spec?: { selector?: V1LabelSelector } }[]) =>
    items
      .filter((o) => !o.metadata?.ownerReferences?.some((r) => r.controller) && !o.metadata?.deletionTimestamp)
      .map((o) => ({ kind, name: o.metadata?.name ?? '', podSelector: labelSelectorString(o.spec?.selector), labels: o.metadata?.labels ?? {} }));
  return [
    ...refs('Deployment', deployments.items),
    ...refs('StatefulSet', statefulSets.items),
    ...refs('DaemonSet', daemonSets.items),
    ...refs('Job', jobs.items),
  ];
}
