/**
 * Following a workload's logs for one open page: one log stream per started container of its pods,
 * a container restarted or a pod new since picked up (its log from its start, within the tail), the
 * lines of all gathered for a moment and handed on in time order.
 *
 * Memory is bounded: at most `maxPending` lines wait between two hand-overs, and a page that cannot
 * take them (its `lines` answers false) or lets more pile up is cut off with one line, never
 * buffered for. Closing ends every stream.
 */
import type { PodLogAt, PodLogEnd } from './kube-cluster.ts';
import { type LogLine, timedLogLine } from './log-lines.ts';
import type { PodSummary } from './model.ts';

/** A container's log as the page's user reads it (DashboardCluster.podLog, a fake in the unit tests). */
export type PodLogSource = (at: PodLogAt, line: (raw: string) => void, signal: AbortSignal) => Promise<PodLogEnd>;

export interface FollowSink {
  /** New lines, in time order; false when the page is too slow to be given more. */
  lines(batch: LogLine[]): boolean;
  /** The follow ended (fell behind, rights gone); nothing more comes. */
  end(reason: string): void;
}

export interface FollowOptions {
  /** Lines of each container's log read back when its stream opens. */
  tail: number;
  /** Lines that may wait for the next hand-over; more and the page is cut off. */
  maxPending: number;
  /** How long lines are gathered into one hand-over. */
  gatherMs: number;
}

export const FELL_BEHIND = 'this page fell behind the logs: reload it';

/**
 * Lines gathered for `gatherMs`, then handed to the sink in time order; more than `maxPending`
 * waiting, or a sink that takes no more, cuts the page off. A pipeline run's page uses it alone.
 */
export class LineBatches {
  private pending: LogLine[] = [];
  private gathering: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly sink: FollowSink,
    private readonly opts: Pick<FollowOptions, 'maxPending' | 'gatherMs'>,
    /** Called once when the batches end, whatever the reason. */
    private readonly onEnd: () => void = () => undefined,
  ) {}

  push(line: LogLine): void {
    if (this.ended) return;
    this.pending.push(line);
    if (this.pending.length > this.opts.maxPending) {
      this.cut(FELL_BEHIND);
      return;
    }
    this.gathering ??= setTimeout(() => this.handOver(), this.opts.gatherMs);
  }

  /** Hands over what waits now (the end of a log). */
  flush(): void {
    clearTimeout(this.gathering);
    this.handOver();
  }

  /** Ends without a word (the page went). */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.gathering);
    this.pending = [];
    this.onEnd();
  }

  /** Ends, telling the page why. */
  cut(reason: string): void {
    if (this.ended) return;
    this.close();
    this.sink.end(reason);
  }

  private handOver(): void {
    this.gathering = undefined;
    if (this.ended || this.pending.length === 0) return;
    // Stable: lines of one time keep the order they came in.
    const batch = this.pending.sort((a, b) => (a.at || 0) - (b.at || 0));
    this.pending = [];
    if (!this.sink.lines(batch)) this.cut(FELL_BEHIND);
  }
}

export class LogFollow {
  /** The open stream per `pod/container`, with the instance it reads. */
  private readonly open = new Map<string, { instance: string; stop: AbortController }>();
  /** The instance last followed per `pod/container`: an ended one is not read again. */
  private readonly followed = new Map<string, string>();
  private readonly batches: LineBatches;
  private pods: readonly PodSummary[] = [];
  private ended = false;

  constructor(
    private readonly source: PodLogSource,
    sink: FollowSink,
    private readonly opts: FollowOptions,
  ) {
    this.batches = new LineBatches(sink, opts, () => this.stopAll());
  }

  /** The workload's pods now: each started container instance not followed yet gets its stream. */
  update(pods: readonly PodSummary[]): void {
    if (this.ended) return;
    this.pods = pods;
    const present = new Set<string>();
    for (const pod of pods) {
      for (const c of pod.containers) {
        const key = `${pod.name}/${c.name}`;
        present.add(key);
        if (!c.instance || this.open.has(key) || this.followed.get(key) === c.instance) continue;
        this.start(key, pod.name, c.name, c.instance);
      }
    }
    // A pod gone: its streams end now rather than when the API server notices.
    for (const [key, s] of this.open) if (!present.has(key)) s.stop.abort();
  }

  /** How many streams are open (tests, metrics). */
  streams(): number {
    return this.open.size;
  }

  close(): void {
    this.batches.close();
  }

  private stopAll(): void {
    this.ended = true;
    for (const s of this.open.values()) s.stop.abort();
    this.open.clear();
  }

  private start(key: string, pod: string, container: string, instance: string): void {
    const stop = new AbortController();
    this.open.set(key, { instance, stop });
    this.followed.set(key, instance);
    const at: PodLogAt = { pod, container, tail: this.opts.tail, follow: true };
    const done = (end: PodLogEnd | 'failed') => {
      if (this.open.get(key)?.stop === stop) this.open.delete(key);
      if (this.ended) return;
      if (end === 'forbidden') {
        this.batches.cut('you may not read the logs of this namespace any more');
        return;
      }
      // Not started after all: asked again on the pods' next change.
      if (end === 'unavailable') this.followed.delete(key);
      // A container that restarted meanwhile has a new instance to follow.
      this.update(this.pods);
    };
    this.source(at, (raw) => this.batches.push(timedLogLine(key, raw)), stop.signal).then(done, () => done('failed'));
  }
}
