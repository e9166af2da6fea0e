import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEV_SESSION_CONFLICTS_MAX,
  DEV_SESSION_HEARTBEAT_MS,
  DEV_SESSION_MIN_INTERVAL_MS,
  decodeDevSession,
  type DevSessionState,
} from '../../api/dev-session.ts';
import { type PublisherClock, SessionPublisher } from './session-publisher.ts';

const T0 = Date.parse('2026-12-02T13:00:00.000Z');

/** A clock whose time moves only by advance(), running the timers due on the way, in order. */
function fakeClock(): PublisherClock & { advance(ms: number): Promise<void>; pending(): number } {
  let now = T0;
  let timers: { at: number; fn: () => void }[] = [];
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    now: () => now,
    later(fn, ms) {
      const timer = { at: now + ms, fn };
      timers.push(timer);
      return () => {
        timers = timers.filter((t) => t !== timer);
      };
    },
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (;;) {
        const next = timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!next) break;
        timers = timers.filter((t) => t !== next);
        now = next.at;
        next.fn();
        await settle();
      }
      now = end;
    },
    pending: () => timers.length,
  };
}

function publisher(o: { fail?: () => boolean } = {}) {
  const clock = fakeClock();
  const writes: { at: number; state: DevSessionState }[] = [];
  const debug: string[] = [];
  const p = new SessionPublisher({
    write: async (value) => {
      if (o.fail?.()) throw new Error('deployments.apps "web-dev" is forbidden');
      const state = decodeDevSession(value);
      assert.ok(state, `every value written decodes: ${value}`);
      writes.push({ at: clock.now() - T0, state });
    },
    debug: (line) => debug.push(line),
    user: 'alice',
    version: '0.1.0',
    forwards: [{ local: 8080, remote: 'web:80' }],
    sync: { state: 'starting' },
    clock,
  });
  return { p, clock, writes, debug };
}

test('nothing is written before the session is ready; then at once, and a heartbeat every interval while nothing changes', async () => {
  const { p, clock, writes } = publisher();
  p.syncChanged({ state: 'watching' });
  await clock.advance(60_000);
  assert.equal(writes.length, 0);
  p.ready();
  await clock.advance(3 * DEV_SESSION_HEARTBEAT_MS);
  assert.deepEqual(
    writes.map((w) => w.at),
    [60_000, 60_000 + DEV_SESSION_HEARTBEAT_MS, 60_000 + 2 * DEV_SESSION_HEARTBEAT_MS, 60_000 + 3 * DEV_SESSION_HEARTBEAT_MS],
  );
  assert.equal(writes[0]!.state.startedAt, '2026-12-02T13:00:00.000Z');
  assert.equal(writes[3]!.state.heartbeatAt, '2026-12-02T13:02:30.000Z');
  assert.deepEqual(writes[0]!.state.sync, { state: 'watching' });
  assert.deepEqual(writes[0]!.state.forwards, [{ local: 8080, remote: 'web:80' }]);
});

test('a burst of changes is written at most once per interval, the latest state last', async () => {
  const { p, clock, writes } = publisher();
  p.ready();
  await clock.advance(0);
  for (let i = 1; i <= 40; i++) {
    p.syncChanged({ state: 'syncing', toReceive: i, toSend: 0 });
    await clock.advance(250);
  }
  p.syncChanged({ state: 'watching' });
  await clock.advance(DEV_SESSION_MIN_INTERVAL_MS);
  const times = writes.map((w) => w.at);
  for (let i = 1; i < times.length; i++) assert.ok(times[i]! - times[i - 1]! >= DEV_SESSION_MIN_INTERVAL_MS, `writes at ${times}`);
  // 10 s of changes: the first write, two during the burst, one after with the latest state.
  assert.equal(writes.length, 4, `writes at ${times}`);
  assert.deepEqual(writes.at(-1)!.state.sync, { state: 'watching' });
  // A change after a quiet spell goes at once.
  await clock.advance(20_000);
  const before = writes.length;
  p.connectionChanged(false);
  await clock.advance(0);
  assert.equal(writes.length, before + 1);
  assert.equal(writes.at(-1)!.state.connection.state, 'reconnecting');
});

test('an unchanged state is no change: only the heartbeat writes it', async () => {
  const { p, clock, writes } = publisher();
  p.syncChanged({ state: 'watching' });
  p.ready();
  await clock.advance(10_000);
  p.syncChanged({ state: 'watching' });
  p.connectionChanged(true);
  await clock.advance(10_000);
  assert.equal(writes.length, 1);
});

test('conflict copies: the latest few and the total, whatever their number', async () => {
  const { p, clock, writes } = publisher();
  p.ready();
  for (let i = 1; i <= 50; i++) p.conflict(`./src/f${i}.sync-conflict-20261202-130000-AAAAAAA.txt`);
  await clock.advance(DEV_SESSION_MIN_INTERVAL_MS);
  const { conflicts } = writes.at(-1)!.state;
  assert.equal(conflicts.total, 50);
  assert.equal(conflicts.latest.length, DEV_SESSION_CONFLICTS_MAX);
  assert.match(conflicts.latest.at(-1)!, /f50\.sync-conflict/);
  assert.match(conflicts.latest[0]!, new RegExp(`f${50 - DEV_SESSION_CONFLICTS_MAX + 1}\\.sync-conflict`));
});

test('a failed write is logged at debug and written again on the next change, never retried in a loop', async () => {
  let failing = true;
  const { p, clock, writes, debug } = publisher({ fail: () => failing });
  p.ready();
  await clock.advance(DEV_SESSION_HEARTBEAT_MS - 1);
  assert.equal(writes.length, 0);
  assert.equal(debug.length, 1);
  assert.match(debug[0]!, /not published .*forbidden/);
  failing = false;
  p.syncChanged({ state: 'watching' });
  await clock.advance(DEV_SESSION_MIN_INTERVAL_MS);
  assert.equal(writes.length, 1);
  assert.deepEqual(writes[0]!.state.sync, { state: 'watching' });
});

test('end: a last write marked ended, then no timer and no write', async () => {
  const { p, clock, writes } = publisher();
  p.ready();
  await clock.advance(12_000);
  await p.end(2000);
  assert.equal(writes.at(-1)!.state.endedAt, '2026-12-02T13:00:12.000Z');
  assert.equal(clock.pending(), 0);
  const n = writes.length;
  p.syncChanged({ state: 'watching' });
  p.conflict('./x.sync-conflict-1');
  await clock.advance(10 * DEV_SESSION_HEARTBEAT_MS);
  assert.equal(writes.length, n);
});

test('end of a session never published writes nothing', async () => {
  const { p, clock, writes } = publisher();
  await p.end(2000);
  p.ready();
  await clock.advance(DEV_SESSION_HEARTBEAT_MS);
  assert.equal(writes.length, 0);
});

test('end waits at most its time for a write that hangs', async () => {
  const clock = fakeClock();
  let calls = 0;
  const p = new SessionPublisher({
    write: (_value) => {
      calls += 1;
      return calls === 1 ? Promise.resolve() : new Promise(() => undefined);
    },
    debug: () => undefined,
    user: 'alice',
    version: '0.1.0',
    forwards: [],
    sync: { state: 'off' },
    clock,
  });
  p.ready();
  let ended = false;
  const ending = p.end(2000).then(() => {
    ended = true;
  });
  await clock.advance(1999);
  assert.equal(ended, false);
  await clock.advance(1);
  await ending;
  assert.equal(ended, true);
});
