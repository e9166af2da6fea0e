/**
 * Noticing a sleep from the wall clock (wake.ts): a tick on time is no sleep, a tick seconds late
 * is, a clock set back is not; and the watcher calls back with how long the process did not run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleptMs, WAKE_LATE_MS, WAKE_TICK_MS, watchWake } from './wake.ts';

test('sleptMs: on time or a little late is no sleep; seconds late is, by how much; a clock set back is none', () => {
  assert.equal(sleptMs(0, WAKE_TICK_MS), 0);
  assert.equal(sleptMs(0, WAKE_TICK_MS + WAKE_LATE_MS), 0, 'an event loop busy for a few seconds');
  assert.equal(sleptMs(0, 61_000), 60_000, 'a minute asleep');
  assert.equal(sleptMs(10_000, 5_000), 0, 'NTP set the clock back');
});

test('watchWake calls back once per sleep, with its length, and stops when told', async () => {
  let wall = 1_000_000;
  const calls: number[] = [];
  const stop = watchWake(
    (ms) => calls.push(ms),
    () => wall,
  );
  // Each tick, the fake wall clock moves as much as the timer says; once, a minute more.
  const tick = () => new Promise((r) => setTimeout(r, WAKE_TICK_MS + 50));
  wall += WAKE_TICK_MS;
  await tick();
  wall += 60_000 + WAKE_TICK_MS;
  await tick();
  wall += WAKE_TICK_MS;
  await tick();
  stop();
  wall += 60_000;
  await tick();
  assert.deepEqual(calls, [60_000]);
});
