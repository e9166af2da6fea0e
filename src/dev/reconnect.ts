/**
 * The tunnel's reconnect decisions (tunnel.ts), apart from SSH and the cluster: keep one connection
 * to the dev container, dial again with backoff whenever it drops or a dial fails, hand the current
 * one to whoever asks (waiting for the next one when there is none), say when it is lost and back,
 * and end everything at once on close(). `dial` is the only way out, so a test drives it with fakes.
 */
import { sleep } from '../base/wait.ts';
import { DevtoolError } from '../base/errors.ts';
import type { Logger } from '../log/logger.ts';

/** What the reconnector needs of a connection: to end it, and to hear when it has closed. */
export interface Connection {
  end(): void;
  /** Drops it at once, without a goodbye (one a dead network path would never deliver). */
  destroy?(): void;
  once(event: 'close', listener: () => void): unknown;
}

export interface ReconnectOptions<C extends Connection> {
  /** One connection attempt: resolves once the connection is ready, rejects when it fails. */
  dial(): Promise<C>;
  /** Each new connection, before anyone gets it (the tunnel asks for its reverse forwards here). */
  connected?(c: C): void;
  /** One-line notices for the user (connection lost, back). */
  notice?(message: string): void;
  /** Whether a connection is live, each time that changes (the first connection included). */
  changed?(connected: boolean): void;
  log: Pick<Logger, 'debug'>;
  /** Tests replace the clock and the waits between attempts. */
  now?(): number;
  sleep?(ms: number): Promise<void>;
}

/** connection() waited its time and no connection came (a closed reconnector fails otherwise). */
export class ConnectTimeoutError extends DevtoolError {}

/** The notice of a connection back after one was lost. */
export const RECONNECTED = 'reconnected to the dev container';

export const BACKOFF_MIN_MS = 250;
export const BACKOFF_MAX_MS = 5000;
/** verify(): a deadline passed this late (the event loop was busy) is extended by as much. */
export const VERIFY_GRACE_MS = 200;
/** A connection that lasted longer than this resets the backoff. */
export const STABLE_MS = 10_000;

/**
 * The wait before the next attempt: a connection that lasted is redialled at once (after a
 * suspend, or a dropped port-forward, every 250 ms counts: sync waits for it); quick failures
 * double the wait from the minimum up to the maximum.
 */
export function nextBackoff(previousMs: number, lastedMs: number): number {
  return lastedMs > STABLE_MS ? 0 : Math.min(Math.max(previousMs * 2, BACKOFF_MIN_MS), BACKOFF_MAX_MS);
}

export class Reconnector<C extends Connection> {
  private current?: C;
  /** Callers of connection() waiting for the next connection: resolved by it, failed by close(). */
  private waiters: { done(c: C): void; fail(err: Error): void }[] = [];
  private closed = false;
  private everConnected = false;
  /** Why the last attempt failed (the tunnel adds its port-forward's failures): said on a timeout. */
  lastError = '';

  constructor(private readonly o: ReconnectOptions<C>) {}

  /** Starts dialling, and keeps at it until close(). */
  start(): void {
    void this.loop();
  }

  /** Whether a connection is live right now. */
  get isConnected(): boolean {
    return this.current !== undefined;
  }

  /** The live connection, waiting for a reconnect if there is none right now. */
  connection(timeoutMs = 30_000): Promise<C> {
    if (this.current) return Promise.resolve(this.current);
    if (this.closed) return Promise.reject(new DevtoolError('the connection to the dev container is closed'));
    return new Promise((resolve, reject) => {
      const waiter = {
        done: (c: C) => {
          clearTimeout(timer);
          resolve(c);
        },
        fail: (err: Error) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new ConnectTimeoutError(`cannot reach the dev container's SSH server${this.lastError ? `: ${this.lastError}` : ''}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /**
   * Makes sure the current connection still answers (after the machine slept: wake.ts). `probe`
   * resolves once the far end has answered anything; a connection that does not within `timeoutMs`
   * is dropped at once, so the loop dials anew instead of waiting for the keepalive (15 s or more
   * on a path that died while the machine slept: no reset ever arrives there). Resolves whether it
   * answered.
   */
  async verify(probe: (c: C) => Promise<void>, timeoutMs: number): Promise<boolean> {
    const c = this.current;
    if (!c || this.closed) return false;
    const answered = await new Promise<boolean>((resolve) => {
      // A busy event loop (a synchronous read of many files) must not drop a healthy connection
      // whose answer is only unread: the answer crosses two sockets of this process (the
      // port-forward's, then SSH's), each read in a later turn of the loop than the timer that
      // fired late. So a deadline passed late gives the I/O a little more time, and one on time
      // is decided after the poll phase that follows (setImmediate), not in the timers phase.
      let due = performance.now() + timeoutMs;
      let timer: NodeJS.Timeout;
      const expire = () => {
        const late = performance.now() - due;
        if (late > VERIFY_GRACE_MS) {
          due = performance.now() + VERIFY_GRACE_MS;
          timer = setTimeout(expire, VERIFY_GRACE_MS);
        } else setImmediate(() => resolve(false));
      };
      timer = setTimeout(expire, timeoutMs);
      probe(c).then(
        () => {
          clearTimeout(timer);
          resolve(true);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    });
    if (!answered && this.current === c && !this.closed) {
      this.o.log.debug(`dev tunnel: the connection did not answer within ${timeoutMs} ms; dropping it and dialling again`);
      if (c.destroy) c.destroy();
      else c.end();
    }
    return answered;
  }

  /** Ends the current connection and fails every waiter, at once; nothing is dialled after it. */
  close(): void {
    this.closed = true;
    this.current?.end();
    for (const w of this.waiters.splice(0)) w.fail(new DevtoolError('the connection to the dev container is closed'));
  }

  private async loop(): Promise<void> {
    const now = this.o.now ?? Date.now;
    const pause = this.o.sleep ?? sleep;
    let delay = BACKOFF_MIN_MS;
    while (!this.closed) {
      const started = now();
      try {
        const c = await this.o.dial();
        if (this.closed) {
          c.end();
          break;
        }
        if (this.everConnected) this.o.notice?.(RECONNECTED);
        this.everConnected = true;
        this.current = c;
        this.o.connected?.(c);
        this.o.changed?.(true);
        for (const w of this.waiters.splice(0)) w.done(c);
        await new Promise<void>((resolve) => c.once('close', () => resolve()));
        this.current = undefined;
        if (!this.closed) this.o.changed?.(false);
        this.o.log.debug(`dev tunnel: connection closed after ${now() - started} ms${this.closed ? '' : ', reconnecting'}`);
        if (!this.closed) this.o.notice?.('connection to the dev container lost; reconnecting');
      } catch (err) {
        this.lastError = (err as Error).message;
        this.o.log.debug(`dev tunnel: ${this.lastError}`);
      }
      delay = nextBackoff(delay, now() - started);
      if (!this.closed) await pause(delay);
    }
  }
}
