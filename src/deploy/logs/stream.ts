/**
 * The logs of a set of pods, their lines interleaved as they come. Once: every started container's
 * log (--tail and --since per container), then the end. Following: the same logs kept open, and a
 * watch of the pods that starts the log of every container run that appears later (a restarted
 * container, a rescheduled or replaced pod, a new replica), from its first line; one stream per
 * container run, never two. The cluster is reached through PodLogApi only, so a test drives this
 * with an in-memory one; `podLogApi` (api.ts) is the real one.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isLater, LineSplitter, linePrefix, timedLine } from './lines.ts';
import { byServiceThenName, podService, startedContainers, waitingContainers, type ContainerRun } from './pods.ts';

/** What is asked of one container's log. */
export interface LogQuery {
  follow: boolean;
  /** Lines from the end; absent: every line. */
  tailLines?: number;
  sinceSeconds?: number;
  /** Lines from this time on (RFC 3339): a followed log opened again where it was cut. */
  sinceTime?: string;
  timestamps: boolean;
}

/** One container's log being read: `done` settles when it ends (rejects when it fails); `stop` ends it. */
export interface LogStream {
  done: Promise<void>;
  stop(): void;
}

/** What the logs read from the cluster, and nothing more. */
export interface PodLogApi {
  /** The pods `labelSelector` selects (undefined: every pod of the namespace) and the version a watch starts from. */
  pods(labelSelector: string | undefined): Promise<{ items: V1Pod[]; resourceVersion?: string }>;
  /**
   * Watches those pods from `resourceVersion`: `event` for each change, `done` once when the watch
   * ends (the server's timeout, a dropped connection, a refusal). Resolves to what stops it.
   */
  watchPods(
    labelSelector: string | undefined,
    resourceVersion: string | undefined,
    event: (type: string, pod: V1Pod) => void,
    done: (err: unknown) => void,
  ): Promise<() => void>;
  /** Opens a container's log; its bytes go to `data` as they come. */
  log(run: ContainerRun, query: LogQuery, data: (chunk: Buffer) => void): LogStream;
}

export interface LogsRequest {
  /** Which pods to list and watch (undefined: every pod of the namespace). */
  labelSelector: string | undefined;
  /** Of those, the pods whose logs are wanted (the services named on the command line). */
  accept(pod: V1Pod): boolean;
  /** What the pods are, for notices: "environment shop in namespace dev". */
  what: string;
  follow: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  timestamps: boolean;
}

/** Where lines and notices go: a line of a container, and what the user should know (on stderr). */
export interface LogsOutput {
  line(run: ContainerRun, text: string): void;
  notice(text: string): void;
}

export interface LogsResult {
  /** Container logs that could not be read (said by a notice each). */
  failed: number;
}

/**
 * The wait before a watch is made again after it failed, doubled each time up to `max`, and
 * before a followed log cut while its container runs is opened again (tests shorten them).
 */
export interface Backoff {
  minMs: number;
  maxMs: number;
}

const BACKOFF: Backoff = { minMs: 1000, maxMs: 30_000 };

export class PodLogs {
  /** Container runs whose log was opened: never twice. */
  private readonly opened = new Set<string>();
  private readonly streams = new Set<LogStream>();
  /** The open logs, each until it has ended and its last line is out. */
  private readonly reading = new Set<Promise<void>>();
  private failed = 0;
  private stopped = false;
  private stopWatch: (() => void) | undefined;
  /** What ends the current waits at once (the watch, pauses) when the logs stop. */
  private readonly wakers = new Set<() => void>();
  /** The latest state of each pod (lists and watch events): whether a run whose followed log ended still runs. */
  private readonly latest = new Map<string, V1Pod>();

  constructor(
    private readonly api: PodLogApi,
    private readonly req: LogsRequest,
    private readonly out: LogsOutput,
    private readonly backoff: Backoff = BACKOFF,
  ) {}

  /** Reads the logs; with follow, until `signal` is aborted. */
  async run(signal?: AbortSignal): Promise<LogsResult> {
    const stop = () => this.stop();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const list = await this.api.pods(this.req.labelSelector);
      const pods = list.items.filter((p) => this.req.accept(p)).sort(byServiceThenName);
      if (pods.length === 0) this.out.notice(`no pods of ${this.req.what}${this.req.follow ? ' yet; waiting for them' : ''}`);
      for (const pod of pods) this.open(pod, true);
      if (!this.req.follow) {
        for (const pod of pods) {
          for (const w of waitingContainers(pod)) {
            const several = (pod.spec?.containers.length ?? 0) > 1;
            const prefix = linePrefix({ service: podService(pod), pod: pod.metadata?.name ?? '', container: w.container, several });
            this.out.notice(`${prefix} has no log yet: ${w.reason}`);
          }
        }
      } else if (!signal?.aborted) {
        await this.follow(list.resourceVersion);
      }
      while (this.reading.size > 0) await Promise.all(this.reading);
      return { failed: this.failed };
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }

  /** Ends the watch and every open log. */
  stop(): void {
    this.stopped = true;
    this.stopWatch?.();
    for (const wake of this.wakers) wake();
    for (const s of this.streams) s.stop();
  }

  /**
   * Watches the pods until stopped. A watch ends now and then (the server's timeout, a dropped
   * connection, a version too old): the pods are listed again, which opens the logs of any that
   * came meanwhile, and a new watch starts from that list.
   */
  private async follow(from: string | undefined): Promise<void> {
    let version = from;
    let failures = 0;
    while (!this.stopped) {
      const err = await this.watchOnce(version);
      if (this.stopped) break;
      if (err) {
        failures++;
        await this.pause(Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** (failures - 1)));
        if (this.stopped) break;
      }
      try {
        const list = await this.api.pods(this.req.labelSelector);
        version = list.resourceVersion;
        for (const pod of list.items.filter((p) => this.req.accept(p)).sort(byServiceThenName)) this.open(pod, false);
        if (!err) failures = 0;
      } catch {
        failures++;
        version = undefined;
      }
    }
  }

  /** One watch, until it ends; its error, if it failed. */
  private watchOnce(version: string | undefined): Promise<unknown> {
    let wake = () => {};
    return new Promise<unknown>((resolve) => {
      wake = () => resolve(undefined);
      this.wakers.add(wake);
      const event = (type: string, pod: V1Pod) => {
        // An ERROR event (an expired version) ends this watch: the loop lists anew.
        if (type === 'ERROR') {
          this.stopWatch?.();
          resolve(new Error(`watch: ${(pod as { message?: string }).message ?? 'error event'}`));
          return;
        }
        if (type === 'DELETED') this.latest.delete(pod.metadata?.name ?? '');
        if ((type === 'ADDED' || type === 'MODIFIED') && this.req.accept(pod)) this.open(pod, false);
      };
      this.api.watchPods(this.req.labelSelector, version, event, resolve).then((stopIt) => {
        this.stopWatch = stopIt;
        if (this.stopped) stopIt();
      }, resolve);
    }).finally(() => this.wakers.delete(wake));
  }

  /** Waits `ms`, or less when stopped. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  /**
   * Opens the log of each started container run of `pod` not opened yet. Those there when the
   * command started get --tail and --since; one that starts later is new: all its lines are.
   */
  private open(pod: V1Pod, atStart: boolean): void {
    if (this.stopped) return;
    this.latest.set(pod.metadata?.name ?? '', pod);
    for (const run of startedContainers(pod)) {
      if (this.opened.has(run.runId)) continue;
      this.opened.add(run.runId);
      const { follow, tailLines, sinceSeconds } = this.req;
      const query = atStart
        ? { follow, ...(tailLines !== undefined ? { tailLines } : {}), ...(sinceSeconds !== undefined ? { sinceSeconds } : {}) }
        : { follow: true };
      this.read(run, query, undefined, 0);
    }
  }

  /**
   * Reads one run's log. Lines always come timestamped, so that a followed log cut while its
   * container still runs (a dropped connection, an API server restarting) is opened again from the
   * time of its last line, the lines up to it skipped: none lost, none twice. Reopened logs that
   * bring no line are given up after a few.
   */
  private read(run: ContainerRun, query: Omit<LogQuery, 'timestamps'>, after: string | undefined, quietReopens: number): void {
    const lines = new LineSplitter();
    let last = after;
    let printed = false;
    const print = (line: string) => {
      const { time, text } = timedLine(line);
      if (time !== undefined) {
        if (after !== undefined && !isLater(time, after)) return;
        last = time;
      }
      printed = true;
      this.out.line(run, this.req.timestamps ? line : text);
    };
    const stream = this.api.log(run, { ...query, timestamps: true }, (chunk) => {
      for (const line of lines.push(chunk)) print(line);
    });
    this.streams.add(stream);
    const reading: Promise<void> = stream.done
      .then(
        () => undefined,
        (err: unknown) => err,
      )
      .then(async (err) => {
        for (const line of lines.end()) print(line);
        this.streams.delete(stream);
        if (this.stopped) return;
        const reopens = printed ? 0 : quietReopens + 1;
        if (query.follow && this.stillRuns(run) && reopens <= MAX_QUIET_REOPENS) {
          await this.pause(this.backoff.minMs);
          // From the last line's time; before any line, as it was first asked.
          if (!this.stopped) this.read(run, last !== undefined ? { follow: true, sinceTime: last } : query, last, reopens);
          return;
        }
        if (!err) return;
        this.failed++;
        this.out.notice(`${linePrefix(run)} the log could not be read: ${(err as Error).message ?? String(err)}`);
      })
      .finally(() => this.reading.delete(reading));
    this.reading.add(reading);
  }

  /** Whether the container run is running, by the pod's latest state. */
  private stillRuns(run: ContainerRun): boolean {
    const pod = this.latest.get(run.pod);
    if (!pod || pod.metadata?.deletionTimestamp) return false;
    return pod.status?.containerStatuses?.some((s) => s.containerID === run.runId && s.state?.running !== undefined) ?? false;
  }
}

/** Reopened logs in a row that bring no line before the run is given up. */
const MAX_QUIET_REOPENS = 3;
