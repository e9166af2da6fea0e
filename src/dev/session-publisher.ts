/**
 * Publishes a running `up` session's state (api/dev-session.ts) through one `write` of the
 * annotation's value: once the session is ready, then on each change of its sync state, conflict
 * copies or connection, at most once every DEV_SESSION_MIN_INTERVAL_MS (the latest state then
 * goes), and at least every DEV_SESSION_HEARTBEAT_MS. One write at a time, never awaited by the
 * caller: the sync and the terminal never wait for the cluster. A failed write is logged and
 * left to the next change or heartbeat. It holds one state, no history: the latest conflict copies
 * (DEV_SESSION_CONFLICTS_MAX) and their count.
 */
import {
  DEV_SESSION_CONFLICTS_MAX,
  DEV_SESSION_FORMAT,
  DEV_SESSION_HEARTBEAT_MS,
  DEV_SESSION_MIN_INTERVAL_MS,
  type DevSessionState,
  type DevSessionSync,
} from '../../api/dev-session.ts';
import { sessionAnnotationValue } from './session-state.ts';

/** The time and the timers the publisher runs on (a test gives its own). */
export interface PublisherClock {
  now(): number;
  /** Calls `fn` after `ms`; returns how to cancel it. The timer must not keep the process alive. */
  later(fn: () => void, ms: number): () => void;
}

export const realClock: PublisherClock = {
  now: () => Date.now(),
  later: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface SessionPublisherOptions {
  /** Writes the annotation's value; rejects when it could not. */
  write(value: string): Promise<void>;
  /** devtool.log, at debug: a failed write is said nowhere else. */
  debug(line: string): void;
  user: string;
  version: string;
  forwards: DevSessionState['forwards'];
  /** The sync until told otherwise: `starting`, or `off` without a synchronized folder. */
  sync: DevSessionSync;
  clock?: PublisherClock;
}

export class SessionPublisher {
  private readonly clock: PublisherClock;
  private readonly startedAt: number;
  private sync: DevSessionSync;
  private conflictTotal = 0;
  private readonly latestConflicts: string[] = [];
  private reconnectingSince: number | undefined;
  private published = false;
  private ended = false;
  private dirty = false;
  private lastWriteAt = 0;
  private writing: Promise<void> | undefined;
  private cancelTimer: (() => void) | undefined;

  constructor(private readonly o: SessionPublisherOptions) {
    this.clock = o.clock ?? realClock;
    this.startedAt = this.clock.now();
    this.sync = o.sync;
  }

  /** The session is ready: the first write goes now, and the heartbeat starts. */
  ready(): void {
    if (this.published || this.ended) return;
    this.published = true;
    this.flush();
  }

  syncChanged(sync: DevSessionSync): void {
    if (JSON.stringify(sync) === JSON.stringify(this.sync)) return;
    this.sync = sync;
    this.changed();
  }

  /** A new conflict copy (its path from the project folder). */
  conflict(path: string): void {
    this.conflictTotal += 1;
    this.latestConflicts.push(path);
    if (this.latestConflicts.length > DEV_SESSION_CONFLICTS_MAX) this.latestConflicts.shift();
    this.changed();
  }

  connectionChanged(connected: boolean): void {
    if (connected === (this.reconnectingSince === undefined)) return;
    this.reconnectingSince = connected ? undefined : this.clock.now();
    this.changed();
  }

  /** The state as the next write would publish it. */
  state(now = this.clock.now()): DevSessionState {
    return {
      format: DEV_SESSION_FORMAT,
      user: this.o.user,
      version: this.o.version,
      startedAt: iso(this.startedAt),
      heartbeatAt: iso(now),
      ...(this.ended ? { endedAt: iso(now) } : {}),
      sync: this.sync,
      conflicts: { total: this.conflictTotal, latest: [...this.latestConflicts] },
      forwards: this.o.forwards,
      connection: this.reconnectingSince === undefined ? { state: 'connected' } : { state: 'reconnecting', since: iso(this.reconnectingSince) },
    };
  }

  /**
   * No write after this one: a published session is written once more, marked ended, within
   * `timeoutMs` (after it the write is left behind: `up` is exiting).
   */
  async end(timeoutMs: number): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.cancelTimer?.();
    if (!this.published) return;
    const last = (async () => {
      await this.writing;
      await this.attempt();
    })();
    await new Promise<void>((resolve) => {
      const cancel = this.clock.later(resolve, timeoutMs);
      void last.finally(() => {
        cancel();
        resolve();
      });
    });
  }

  private changed(): void {
    this.dirty = true;
    this.schedule();
  }

  /** The next write: the latest change once the interval allows, else the heartbeat. */
  private schedule(): void {
    if (!this.published || this.ended || this.writing) return;
    this.cancelTimer?.();
    const now = this.clock.now();
    const due = this.dirty ? Math.max(this.lastWriteAt + DEV_SESSION_MIN_INTERVAL_MS, now) : this.lastWriteAt + DEV_SESSION_HEARTBEAT_MS;
    this.cancelTimer = this.clock.later(() => this.flush(), due - now);
  }

  private flush(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.ended || this.writing) return;
    this.writing = this.attempt().finally(() => {
      this.writing = undefined;
      this.schedule();
    });
  }

  private async attempt(): Promise<void> {
    const now = this.clock.now();
    this.dirty = false;
    this.lastWriteAt = now;
    try {
      await this.o.write(sessionAnnotationValue(this.state(now)));
    } catch (err) {
      this.o.debug(`session state not published (again on the next change or heartbeat): ${(err as Error).message}`);
    }
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
