/**
 * Following the dev pod as it starts: a watch on the dev container's pods, so that `up` sees the
 * pod ready the moment the API server says so (instead of up to half a second later at the next
 * poll), and so devtool.log says where the start spent its time: scheduled, each init container
 * started and done, the containers started, ready. `bench/dev-up.mjs` prints those lines for its
 * slowest run.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/** One line for where this pod's start is now; a new line means a step was taken. */
export function podStartStep(pod: V1Pod): string {
  const name = pod.metadata?.name ?? '?';
  const status = pod.status ?? {};
  if (pod.metadata?.deletionTimestamp) return `pod ${name}: ending`;
  const scheduled = status.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True');
  if (!scheduled) return `pod ${name}: waiting to be scheduled`;
  const inits = status.initContainerStatuses ?? [];
  const init = inits.find((c) => c.state?.terminated?.exitCode !== 0);
  if (init) return `pod ${name}: init container ${init.name} ${containerState(init)}`;
  const containers = status.containerStatuses ?? [];
  if (containers.length === 0) return `pod ${name}: scheduled`;
  const ready = containers.every((c) => c.ready);
  if (ready) return `pod ${name}: ready`;
  return `pod ${name}: ${containers.map((c) => `${c.name} ${containerState(c)}`).join(', ')}`;
}

function containerState(c: V1ContainerStatus): string {
  if (c.state?.running) return c.ready ? 'ready' : 'running';
  if (c.state?.terminated) return `ended (exit ${c.state.terminated.exitCode})`;
  const reason = c.state?.waiting?.reason;
  return reason ? `waiting (${reason})` : 'waiting';
}

/** What watchPodStart needs of the cluster: a watch on a namespace's pods with a label selector. */
export interface PodWatchApi {
  watch(labelSelector: string, event: (type: string, pod: V1Pod) => void, done: (err: unknown) => void): Promise<{ abort(): void }>;
}

export interface PodStartWatch {
  /** Resolves at the next change of a watched pod, or after `ms`, whichever comes first. */
  sleep(ms: number): Promise<void>;
  stop(): void;
}

/**
 * Watches the pods of `labelSelector`, logging each step any of them takes (podStartStep). A watch
 * that fails or ends is not restarted: the caller polls anyway, the watch only makes it sooner.
 */
export function watchPodStart(api: PodWatchApi, labelSelector: string, log: (line: string) => void): PodStartWatch {
  const last = new Map<string, string>();
  let wake: (() => void) | undefined;
  let stopped = false;
  let handle: { abort(): void } | undefined;
  const changed = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  api
    .watch(
      labelSelector,
      (type, pod) => {
        const name = pod.metadata?.name ?? '?';
        const step = type === 'DELETED' ? `pod ${name}: deleted` : podStartStep(pod);
        if (last.get(name) !== step) {
          last.set(name, step);
          log(step);
        }
        changed();
      },
      () => undefined,
    )
    .then(
      (h) => {
        handle = h;
        if (stopped) h.abort();
      },
      () => undefined,
    );
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wake = undefined;
          resolve();
        }, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    stop: () => {
      stopped = true;
      handle?.abort();
      changed();
    },
  };
}
