/**
 * Noticing that this process has not run for a while: the machine slept (a laptop's lid closed)
 * or the process was stopped (SIGSTOP, Ctrl-Z). The tunnel then checks its SSH connection at once
 * (Reconnector.verify) rather than trusting it until the keepalive gives up.
 *
 * Why the wall clock: Node's timers follow the monotonic clock, which on Linux stops while the
 * machine is suspended, so after a real sleep no timer knows that time passed (ssh2's keepalive
 * starts counting only then: 15 s on a connection whose path died meanwhile). Date.now() goes on
 * through a suspend and through a SIGSTOP alike; a tick of a short interval timer that finds it
 * moved far more than the interval says the process did not run in between.
 */

/** How often the clock is looked at. */
export const WAKE_TICK_MS = 1000;
/** A tick later than this past its time counts as a sleep (an event loop busy for seconds is not one). */
export const WAKE_LATE_MS = 4000;

/**
 * How long the process did not run between two ticks, by the wall clock, or 0 when the tick was
 * about on time. A wall clock set back (NTP) reads as on time.
 */
export function sleptMs(previousWall: number, nowWall: number, tickMs = WAKE_TICK_MS, lateMs = WAKE_LATE_MS): number {
  const gap = nowWall - previousWall;
  return gap > tickMs + lateMs ? gap - tickMs : 0;
}

/**
 * Calls `woke` with how long the process did not run, after each sleep; returns the function that
 * stops watching. The timer does not keep the process alive.
 */
export function watchWake(woke: (sleptMs: number) => void, wallClock: () => number = Date.now): () => void {
  let last = wallClock();
  const timer = setInterval(() => {
    const now = wallClock();
    const slept = sleptMs(last, now);
    last = now;
    if (slept > 0) woke(slept);
  }, WAKE_TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
