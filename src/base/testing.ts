/**
 * For tests only: a WaitClock that does not really wait. `sleep` moves its time forward at once and
 * records how long it was asked to sleep, so a test asserts a loop's pace without spending it.
 */
import type { WaitClock } from './wait.ts';

export function fakeClock(start = 0): WaitClock & { readonly slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}
