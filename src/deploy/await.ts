/**
 * Waiting during a deploy: for a service's depends_on conditions before it is applied, and (with
 * --wait) for every service at the end, or for every workload deploy commands created. Polls every half second, as the peers do, and gives up at
 * the deploy's deadline. A hard failure (image pull error, crash loop, failed Job, failing probe)
 * ends the wait at once with the reason, instead of running out the clock.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { RolloutStep } from '../compose/translate.ts';
import type { DependsCondition } from '../compose/model.ts';
import { waitUntil } from '../base/wait.ts';
import { DevtoolError } from '../base/errors.ts';
import { isTransient, type KubeClient } from '../kube/client.ts';
import { ENVIRONMENT_LABEL, environmentSelector, SERVICE_LABEL } from '../kube/labels.ts';
import { POLL_MS } from '../kube/poll.ts';
import { podAcceptsTcp } from '../kube/port-check.ts';
import { workloadsByLabel, workloadState, type WorkloadRef, type WorkloadState } from '../kube/workloads.ts';
import { formatDuration } from '../base/duration.ts';
import type { Progress } from './progress.ts';

/**
 * What the waits read from the cluster, and nothing more: the loops below decide from these answers
 * alone, so a test drives them with an in-memory fake. `rolloutReader` is the real one.
 */
export interface RolloutReader {
  /** The workload's state (kube/workloads.ts: ready, progressing, failed and why, missing). */
  state(ref: WorkloadRef): Promise<WorkloadState>;
  /** The pods a label selector selects. */
  pods(labelSelector: string): Promise<V1Pod[]>;
  /** Whether the Service `service` routes to at least one ready endpoint. */
  serviceHasReadyEndpoint(service: string): Promise<boolean>;
  /** Whether `pod` accepts a TCP connection on `port`. */
  acceptsTcp(pod: string, port: number): Promise<boolean>;
  /** The workloads carrying the labels of `labelSelector`. */
  workloadsByLabel(labelSelector: string): Promise<(WorkloadRef & { labels: Record<string, string> })[]>;
  /** Deletes a pod (its controller makes a new one). */
  deletePod(name: string): Promise<void>;
}

/** The RolloutReader of a client's namespace. */
export function rolloutReader(client: KubeClient): RolloutReader {
  return {
    state: (ref) => workloadState(client, ref),
    pods: async (labelSelector) => (await client.core.listNamespacedPod({ namespace: client.namespace, labelSelector })).items,
    serviceHasReadyEndpoint: (service) => serviceHasReadyEndpoint(client, service),
    acceptsTcp: (pod, port) => podAcceptsTcp(client, pod, port),
    workloadsByLabel: (labelSelector) => workloadsByLabel(client, labelSelector),
    deletePod: async (name) => {
      await client.core.deleteNamespacedPod({ name, namespace: client.namespace });
    },
  };
}

/** When the waits of one deploy give up: at its --timeout, or at once when it is interrupted (`signal`). */
export class Deadline {
  constructor(
    readonly timeoutMs: number,
    private readonly startedAt = Date.now(),
    readonly signal?: AbortSignal,
  ) {}
  remaining(): number {
    return this.startedAt + this.timeoutMs - Date.now();
  }
}

/** A workload that failed to deploy: the reason and the last lines of its log. */
export class WorkloadFailure extends DevtoolError {
  constructor(
    /** How messages name it: `service "web"`, `Deployment/web`. */
    readonly what: string,
    readonly reason: string,
    readonly logTail?: string,
  ) {
    super(`${what} failed: ${reason}`);
  }
}

/** A Compose service that failed to deploy. */
export class ServiceFailure extends WorkloadFailure {
  constructor(
    readonly service: string,
    reason: string,
    logTail?: string,
  ) {
    super(`service "${service}"`, reason, logTail);
  }
}

/** A workload to await, and how messages name it; `service` for a Compose service. */
export interface AwaitedWorkload {
  ref: WorkloadRef;
  what: string;
  service?: string;
}

export function workloadRef(environment: string, step: RolloutStep): WorkloadRef {
  return { kind: step.kind, name: step.name, podSelector: `${ENVIRONMENT_LABEL}=${environment},${SERVICE_LABEL}=${step.name}` };
}

const describe: Record<DependsCondition, string> = {
  service_started: 'to start',
  service_healthy: 'to be healthy',
  service_completed_successfully: 'to complete successfully',
};

/** Waits until `step` meets `condition`, or throws naming the service and what was awaited. */
export async function awaitCondition(
  client: RolloutReader,
  environment: string,
  step: RolloutStep,
  condition: DependsCondition,
  deadline: Deadline,
): Promise<void> {
  const ref = workloadRef(environment, step);
  if (condition === 'service_completed_successfully' && step.kind !== 'Job') {
    throw new DevtoolError(
      `service "${step.service}" is awaited to complete successfully, but it is a long-running service; give it restart: "no" to make it a one-off job`,
    );
  }
  let state: WorkloadState | undefined;
  // Polls in a row the condition has held with the Service routing to a ready endpoint; once it
  // held, only the route is asked again (a TCP check through a port-forward takes 1.5 s a poll).
  let routedPolls = 0;
  const check = async () => {
    state = await poll(() => client.state(ref));
    if (!state) return false;
    failIfFailed({ ref, what: `service "${step.service}"`, service: step.service }, state);
    if (routedPolls > 0) {
      if ((await poll(() => client.serviceHasReadyEndpoint(step.name))) === true) return ++routedPolls >= ROUTE_SETTLE_POLLS;
      routedPolls = 0;
      return false;
    }
    if ((await poll(() => met(client, step, ref, condition, state!))) !== true) return false;
    if (!reachedThroughService(step, condition)) return true;
    // Ready long before this deploy got here (a redeploy with the dependency unchanged): routed since.
    if ((await poll(() => readySince(client, ref, ROUTED_LONG_AGO_MS))) === true) return true;
    return ++routedPolls >= ROUTE_SETTLE_POLLS;
  };
  await waitUntil(check, {
    timeoutMs: deadline.remaining(),
    intervalMs: POLL_MS,
    ...(deadline.signal ? { signal: deadline.signal } : {}),
    timedOut: () => {
      const detail = state?.state === 'progressing' ? ` (${state.detail})` : state ? '' : ' (the API server does not answer)';
      return new DevtoolError(`timed out after ${formatDuration(deadline.timeoutMs)} waiting for service "${step.service}" ${describe[condition]}${detail}`);
    },
  });
}

/** Ready must hold this many polls in a row: a container that crashes at once looks ready for a moment. */
const STABLE_POLLS = 3;

/**
 * Waits until a service is ready (long-running: rolled out, every container running, for
 * STABLE_POLLS polls in a row) or completed (one-off).
 */
export async function awaitReady(client: RolloutReader, environment: string, step: RolloutStep, deadline: Deadline): Promise<void> {
  await awaitWorkloadReady(client, { ref: workloadRef(environment, step), what: `service "${step.service}"`, service: step.service }, deadline);
}

/**
 * awaitReady for any workload; returns early, quietly, once `stop` is aborted (another one failed).
 * `excused` may take a failure in hand (true: it is not one, the wait goes on).
 */
export async function awaitWorkloadReady(
  client: RolloutReader,
  w: AwaitedWorkload,
  deadline: Deadline,
  stop?: AbortSignal,
  excused: (failed: Extract<WorkloadState, { state: 'failed' }>) => Promise<boolean> = async () => false,
): Promise<void> {
  const { ref } = w;
  let streak = 0;
  let state: WorkloadState | undefined;
  const check = async () => {
    if (stop?.aborted) return true;
    state = await poll(() => client.state(ref));
    if (state?.state === 'failed' && (await excused(state))) {
      streak = 0;
      return false;
    }
    if (state) failIfFailed(w, state);
    if (state?.state === 'completed') return true;
    const ready = state?.state === 'ready' && ref.kind !== 'Job' && (await poll(() => allContainersRunning(client, ref)));
    streak = ready ? streak + 1 : 0;
    return streak >= STABLE_POLLS;
  };
  await waitUntil(check, {
    timeoutMs: deadline.remaining(),
    intervalMs: POLL_MS,
    ...(deadline.signal ? { signal: deadline.signal } : {}),
    timedOut: () => {
      const detail = state?.state === 'progressing' ? ` (${state.detail})` : state ? '' : ' (the API server does not answer)';
      return new DevtoolError(
        `timed out after ${formatDuration(deadline.timeoutMs)} waiting for ${w.what} to be ${ref.kind === 'Job' ? 'complete' : 'ready'}${detail}`,
      );
    },
  });
}

/**
 * --wait for what deploy commands created: every workload carrying the environment label
 * (Deployments, StatefulSets, DaemonSets, Jobs; those `skip` accepts are awaited elsewhere), all at
 * once. The first failure ends the wait, naming the workload, with its log tail; except a pull
 * error for an image of `inRegistry` (the deploy's images, pushed or found there): a pod that
 * tried before the push waits out the kubelet's back-off (up to 5 minutes), so it is deleted,
 * once per workload and image, and its controller's new pod pulls now.
 */
export async function awaitEnvironmentWorkloads(
  client: RolloutReader,
  environment: string,
  deadline: Deadline,
  progress: Progress,
  skip: (labels: Record<string, string>) => boolean = () => false,
  inRegistry: ReadonlySet<string> = new Set(),
): Promise<void> {
  const found = (await client.workloadsByLabel(environmentSelector(environment))).filter((w) => !skip(w.labels));
  if (found.length === 0) {
    progress.step('--wait: no Deployment, StatefulSet, DaemonSet or Job of the environment to wait for');
    return;
  }
  progress.step(`waiting for ${found.map((w) => `${w.kind}/${w.name}`).join(', ')}`);
  const stop = new AbortController();
  const pending = new Set(found.map((w) => `${w.kind}/${w.name}`));
  try {
    await progress.waiting(
      () => [...pending].join(', '),
      Promise.all(
        found.map(async (w) => {
          // A workload without a selector (none of these kinds has one for long): its environment's pods.
          const ref = { ...w, podSelector: w.podSelector || environmentSelector(environment) };
          const what = `${w.kind}/${w.name}`;
          const retried = new Set<string>();
          const stalePull = async (failed: Extract<WorkloadState, { state: 'failed' }>) => {
            const { image, pod } = failed;
            if (!image || !pod || !inRegistry.has(image) || retried.has(image)) return false;
            retried.add(image);
            progress.step(`${what}: pod ${pod} could not pull ${image} before this deploy pushed it: deleting it, so that a new pod pulls it now`);
            await client.deletePod(pod);
            return true;
          };
          await awaitWorkloadReady(client, { ref, what }, deadline, stop.signal, stalePull);
          pending.delete(what);
          if (!stop.signal.aborted) progress.done(`${what} ${w.kind === 'Job' ? 'completed' : 'ready'}`);
        }),
      ),
    );
  } catch (err) {
    stop.abort();
    if (err instanceof WorkloadFailure) {
      progress.fail(err.message);
      if (err.logTail) progress.detail(err.logTail);
    }
    throw err;
  }
}

async function allContainersRunning(client: RolloutReader, ref: WorkloadRef): Promise<boolean> {
  const pods = (await client.pods(ref.podSelector)).filter((p) => !p.metadata?.deletionTimestamp);
  return pods.length > 0 && pods.every((p) => (p.status?.containerStatuses ?? []).every((c) => c.state?.running && c.ready));
}

function failIfFailed(w: AwaitedWorkload, state: WorkloadState): void {
  if (state.state !== 'failed') return;
  throw w.service !== undefined ? new ServiceFailure(w.service, state.reason, state.logTail) : new WorkloadFailure(w.what, state.reason, state.logTail);
}

/**
 * Polls in a row the Service must list a ready endpoint before a dependent starts. There is no API
 * that says each node's kube-proxy has programmed the route: it syncs at most once a second after it
 * sees the EndpointSlice change, later on a busy node, and until then a connection to the Service's
 * address is refused. A one-off dependent (a migration Job) does not retry, so it fails the deploy.
 * Seen in CI: a migration started the moment the database's endpoint was ready got "connection
 * refused". 6 polls is 3 s (this cluster's quiet-machine figure is about 1 s from pod ready).
 */
const ROUTE_SETTLE_POLLS = 6;

/**
 * A pod ready for this long is routed by every node's kube-proxy: no settling wait. Measured by this
 * machine's clock against the pod's Ready time, so generous: a clock 30 s off only costs the 3 s wait.
 */
const ROUTED_LONG_AGO_MS = 30_000;

/** Whether a pod of `ref` (not being deleted) has been ready for at least `ms`. */
async function readySince(client: RolloutReader, ref: WorkloadRef, ms: number): Promise<boolean> {
  const pods = await client.pods(ref.podSelector);
  return pods.some((p) => {
    if (p.metadata?.deletionTimestamp) return false;
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    return ready?.lastTransitionTime !== undefined && Date.now() - new Date(ready.lastTransitionTime).getTime() >= ms;
  });
}

/** Whether dependents reach `step` meeting `condition` through its Service (see met). */
function reachedThroughService(step: RolloutStep, condition: DependsCondition): boolean {
  return condition !== 'service_completed_successfully' && step.kind !== 'Job' && step.tcpPorts.length > 0;
}

async function met(client: RolloutReader, step: RolloutStep, ref: WorkloadRef, condition: DependsCondition, state: WorkloadState): Promise<boolean> {
  if (!(await workloadMet(client, step, ref, condition, state))) return false;
  // Dependents reach a long-running service through its Service, whose endpoints trail pod
  // readiness: started or healthy also means the Service routes to a ready pod.
  if (!reachedThroughService(step, condition)) return true;
  return client.serviceHasReadyEndpoint(step.name);
}

async function serviceHasReadyEndpoint(client: KubeClient, service: string): Promise<boolean> {
  const { DiscoveryV1Api } = await import('@kubernetes/client-node');
  const slices = await client.kc
    .makeApiClient(DiscoveryV1Api)
    .listNamespacedEndpointSlice({ namespace: client.namespace, labelSelector: `kubernetes.io/service-name=${service}` });
  return slices.items.some((slice) => slice.endpoints.some((e) => e.conditions?.ready === true && e.addresses.length > 0));
}

async function workloadMet(client: RolloutReader, step: RolloutStep, ref: WorkloadRef, condition: DependsCondition, state: WorkloadState): Promise<boolean> {
  if (state.state === 'missing') return false;
  if (state.state === 'ready' || state.state === 'completed') {
    // A ready workload without a healthcheck still has to accept connections to count as healthy.
    if (condition !== 'service_healthy' || step.healthyBy === 'probe' || step.kind === 'Job') return true;
  }
  switch (condition) {
    case 'service_completed_successfully':
      return state.state === 'completed';
    case 'service_started':
      return step.kind === 'Job' ? true : (await runningPods(client, ref)).length > 0;
    case 'service_healthy': {
      if (step.healthyBy === 'probe' || step.kind === 'Job') return false;
      const pods = await runningPods(client, ref);
      if (step.tcpPorts.length === 0) return pods.length > 0;
      for (const pod of pods) {
        for (const port of step.tcpPorts) if (await client.acceptsTcp(pod, port)) return true;
      }
      return false;
    }
  }
}

async function runningPods(client: RolloutReader, ref: WorkloadRef): Promise<string[]> {
  const pods = await client.pods(ref.podSelector);
  return pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!);
}

/** One poll; undefined when the API server had a transient failure (the loop just polls again). */
async function poll<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isTransient(err)) return undefined;
    throw err;
  }
}
