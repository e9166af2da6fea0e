/**
 * Waiting, the one way: `sleep`, and `waitUntil`, the poll loop (ask, and again after an interval,
 * until the answer is yes or the time is up). Ground floor: imports nothing from src/.
 */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Time as waitUntil sees it; tests give one that does not really wait. */
export interface WaitClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: WaitClock = { now: () => Date.now(), sleep };

export interface WaitOptions {
  timeoutMs: number;
  /** The pause between two checks (the last pause is cut short at the deadline). */
  intervalMs: number;
  /**
   * The error thrown once the time is up. `lastError` is the last failure `retry` accepted since
   * the last check that answered (undefined when the last check answered "not yet").
   */
  timedOut(lastError: unknown): Error;
  /** Failures that only mean "ask again" (a transient API-server failure); any other ends the wait at once. Default: none. */
  retry?(err: unknown): boolean;
  clock?: WaitClock;
  /** Ends the wait at once, throwing the signal's reason (the command was interrupted). */
  signal?: AbortSignal;
}

/**
 * Calls `check` until it returns something other than `undefined` or `false`, and returns that.
 * It checks at once, then every `intervalMs`, and one last time at the deadline (the pause before
 * it is shortened so the wait never outlasts `timeoutMs` by a whole interval); then it throws
 * `timedOut`.
 */
export async function waitUntil<T>(check: () => T | Promise<T>, o: WaitOptions): Promise<Exclude<T, undefined | false>> {
  const clock = o.clock ?? realClock;
  const deadline = clock.now() + o.timeoutMs;
  for (;;) {
    o.signal?.throwIfAborted();
    let lastError: unknown;
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    } catch (err) {
      if (!o.retry?.(err)) throw err;
      lastError = err;
    }
    const left = deadline - clock.now();
    if (left <= 0) throw o.timedOut(lastError);
    await (o.signal ? abortableSleep(clock, Math.min(o.intervalMs, left), o.signal) : clock.sleep(Math.min(o.intervalMs, left)));
  }
}

/** A pause that ends early when `signal` is aborted (the loop then throws its reason). */
function abortableSleep(clock: WaitClock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done);
    void clock.sleep(ms).then(done);
  });
}
