import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeClock as fakeClockAt } from './testing.ts';
import { sleep, waitUntil } from './wait.ts';

const fakeClock = () => fakeClockAt(1_000);

test('sleep waits about the time asked, and a negative time not at all', async () => {
  const start = Date.now();
  await sleep(20);
  assert.ok(Date.now() - start >= 15);
  await sleep(-5);
});

test('waitUntil returns the first answer that is neither undefined nor false, checking at once', async () => {
  const clock = fakeClock();
  const answers = [undefined, false, 'pod-1'];
  const got = await waitUntil(() => answers.shift(), { timeoutMs: 10_000, intervalMs: 500, clock, timedOut: () => new Error('late') });
  assert.equal(got, 'pod-1');
  assert.deepEqual(clock.slept, [500, 500]);
});

test('waitUntil checks one last time at the deadline, then throws its timeout error', async () => {
  const clock = fakeClock();
  let checks = 0;
  await assert.rejects(
    waitUntil(
      () => {
        checks++;
        return false;
      },
      { timeoutMs: 1_200, intervalMs: 500, clock, timedOut: () => new Error('timed out waiting for the pod') },
    ),
    /timed out waiting for the pod/,
  );
  // 0, 500, 1000, and 1200 (the deadline): the last pause is cut to what is left.
  assert.equal(checks, 4);
  assert.deepEqual(clock.slept, [500, 500, 200]);
});

test('waitUntil asks again after a failure retry accepts, ends at once on any other, and reports the last accepted one', async () => {
  const clock = fakeClock();
  const transient = Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' });
  const retry = (err: unknown) => (err as { code?: string }).code === 'ECONNRESET';
  let n = 0;
  const value = await waitUntil(
    () => {
      if (++n < 3) throw transient;
      return true;
    },
    { timeoutMs: 5_000, intervalMs: 100, retry, clock, timedOut: () => new Error('late') },
  );
  assert.equal(value, true);

  await assert.rejects(
    waitUntil(
      () => {
        throw new Error('forbidden');
      },
      { timeoutMs: 5_000, intervalMs: 100, retry, clock, timedOut: () => new Error('late') },
    ),
    /forbidden/,
  );

  await assert.rejects(
    waitUntil(
      () => {
        throw transient;
      },
      { timeoutMs: 300, intervalMs: 100, retry, clock, timedOut: (last) => new Error(`no answer (${(last as Error).message})`) },
    ),
    /no answer \(ECONNRESET\)/,
  );
});

test('an aborted signal ends the wait at once with its reason, mid-pause too', async () => {
  const controller = new AbortController();
  let checks = 0;
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('interrupted')), 50);
  await assert.rejects(
    waitUntil(
      () => {
        checks++;
        return false;
      },
      { timeoutMs: 60_000, intervalMs: 10_000, signal: controller.signal, timedOut: () => new Error('late') },
    ),
    /^Error: interrupted$/,
  );
  assert.equal(checks, 1);
  assert.ok(Date.now() - started < 5_000);
});
