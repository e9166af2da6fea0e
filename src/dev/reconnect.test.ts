/**
 * The tunnel's reconnect decisions with fake connections: reconnecting after a drop, the backoff
 * while the dev container is unreachable, waiting callers and their timeout, and close().
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { BACKOFF_MAX_MS, BACKOFF_MIN_MS, nextBackoff, Reconnector, STABLE_MS, VERIFY_GRACE_MS } from './reconnect.ts';

class FakeConnection extends EventEmitter {
  ended = false;
  constructor(readonly id: number) {
    super();
  }
  destroyed = false;
  end(): void {
    this.ended = true;
    this.drop();
  }
  destroy(): void {
    this.destroyed = true;
    this.drop();
  }
  /** The pod restarts, the port-forward dies: the connection closes. */
  drop(): void {
    setImmediate(() => this.emit('close'));
  }
}

/** A dev container that is reachable or not; every dial says so, and the waits between them are recorded. */
class FakeDevContainer {
  reachable = true;
  dials = 0;
  readonly connections: FakeConnection[] = [];
  readonly waits: number[] = [];
  readonly notices: string[] = [];
  readonly connected: number[] = [];
  readonly changes: boolean[] = [];
  /** The fake clock: each dial takes `dialMs`, each connection lives `livesMs`. */
  clock = 0;
  dialMs = 10;
  livesMs = 0;

  reconnector(): Reconnector<FakeConnection> {
    return new Reconnector<FakeConnection>({
      dial: async () => {
        this.dials++;
        this.clock += this.dialMs;
        if (!this.reachable) throw new Error('no ready dev pod');
        const c = new FakeConnection(this.connections.length + 1);
        c.once('close', () => (this.clock += this.livesMs));
        this.connections.push(c);
        return c;
      },
      connected: (c) => this.connected.push(c.id),
      notice: (m) => this.notices.push(m),
      changed: (connected) => this.changes.push(connected),
      log: { debug: () => undefined },
      now: () => this.clock,
      // The real wait is recorded, not waited: a macrotask keeps the loop from spinning.
      sleep: (ms) => {
        this.waits.push(ms);
        return new Promise((r) => setTimeout(r, 1));
      },
    });
  }
}

const open: Reconnector<FakeConnection>[] = [];
afterEach(() => {
  for (const r of open.splice(0)) r.close();
});

function started(d: FakeDevContainer): Reconnector<FakeConnection> {
  const r = d.reconnector();
  open.push(r);
  r.start();
  return r;
}

async function eventually(what: string, check: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

test('after a drop it reconnects, says so, asks for the reverse forwards again, and callers get the new connection', async () => {
  const d = new FakeDevContainer();
  const r = started(d);
  const first = await r.connection(1000);
  assert.equal(first.id, 1);
  assert.deepEqual(d.notices, [], 'the first connection is not news');
  first.drop();
  await eventually('the drop is noticed', () => d.notices.length === 1);
  const second = await r.connection(1000);
  assert.equal(second.id, 2);
  assert.deepEqual(d.notices, ['connection to the dev container lost; reconnecting', 'reconnected to the dev container']);
  assert.deepEqual(d.connected, [1, 2], 'connected() runs for every connection');
  assert.equal(await r.connection(), second, 'a live connection is handed out at once');
});

test('changed() says each connection and each loss, the first connection included, and nothing once closed', async () => {
  const d = new FakeDevContainer();
  const r = started(d);
  const first = await r.connection(1000);
  assert.deepEqual(d.changes, [true]);
  first.drop();
  await r.connection(1000).then(() => eventually('the new connection is said', () => d.changes.length === 3));
  assert.deepEqual(d.changes, [true, false, true]);
  r.close();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(d.changes, [true, false, true], 'closing is no lost connection');
});

test('while the dev container is unreachable, the wait doubles from 500 ms up to 5 s; a connection that lasted is redialled at once', async () => {
  const d = new FakeDevContainer();
  d.reachable = false;
  const r = started(d);
  await eventually('seven attempts', () => d.dials >= 7);
  assert.deepEqual(d.waits.slice(0, 6), [500, 1000, 2000, 4000, 5000, 5000]);
  d.reachable = true;
  const c = await r.connection(1000);
  d.livesMs = STABLE_MS + 1;
  const before = d.waits.length;
  c.drop();
  await eventually('reconnected', () => d.connections.length === 2);
  assert.equal(d.waits[before], 0, 'no wait after a connection of more than 10 s');
  // The new connection drops at once and the container stays away: the backoff starts again.
  d.livesMs = 0;
  d.reachable = false;
  (await r.connection(1000)).drop();
  await eventually('two more attempts', () => d.waits.length >= before + 3);
  assert.deepEqual(d.waits.slice(before, before + 3), [0, BACKOFF_MIN_MS, 2 * BACKOFF_MIN_MS], 'then the backoff starts again from the minimum');
});

test('a connection that drops at once does not reset the backoff', async () => {
  const d = new FakeDevContainer();
  const r = started(d);
  for (let i = 1; i <= 4; i++) {
    const c = await r.connection(1000);
    assert.equal(c.id, i);
    c.drop();
    await eventually(`connection ${i} noticed lost`, () => d.waits.length === i);
  }
  assert.deepEqual(d.waits, [500, 1000, 2000, 4000]);
});

test('a caller gives up after its timeout, naming why the last attempt failed; the reconnector keeps trying', async () => {
  const d = new FakeDevContainer();
  d.reachable = false;
  const r = started(d);
  const t0 = Date.now();
  await assert.rejects(r.connection(150), { message: "cannot reach the dev container's SSH server: no ready dev pod" });
  assert.ok(Date.now() - t0 >= 140);
  const dials = d.dials;
  d.reachable = true;
  const c = await r.connection(1000);
  assert.ok(d.dials > dials, 'still dialling after the caller gave up');
  assert.equal(c.id, 1);
});

test('close() fails the waiting callers at once, ends the live connection, and nothing is dialled after it', async () => {
  const d = new FakeDevContainer();
  d.reachable = false;
  const r = started(d);
  await eventually('dialling', () => d.dials >= 1);
  const waiting = r.connection(60_000);
  const t0 = Date.now();
  r.close();
  await assert.rejects(waiting, { message: 'the connection to the dev container is closed' });
  assert.ok(Date.now() - t0 < 1000, 'not held until the 60 s timeout');
  await assert.rejects(r.connection(), { message: 'the connection to the dev container is closed' });
  const dials = d.dials;
  await new Promise((res) => setTimeout(res, 30));
  assert.equal(d.dials, dials);

  const d2 = new FakeDevContainer();
  const r2 = started(d2);
  const live = await r2.connection(1000);
  r2.close();
  assert.equal(live.ended, true);
  await new Promise((res) => setTimeout(res, 30));
  assert.deepEqual([d2.dials, d2.notices], [1, []], 'a close is not a drop: no reconnect, no notice');
});

test('a dial that completes after close() is ended, not handed out', async () => {
  let finish: (c: FakeConnection) => void = () => undefined;
  const r = new Reconnector<FakeConnection>({ dial: () => new Promise((res) => (finish = res)), log: { debug: () => undefined } });
  r.start();
  r.close();
  const late = new FakeConnection(1);
  finish(late);
  await eventually('the late connection is ended', () => late.ended);
});

test('nextBackoff: doubling, capped, none after a stable connection, the minimum after that', () => {
  assert.equal(nextBackoff(BACKOFF_MIN_MS, 0), 500);
  assert.equal(nextBackoff(4000, 9_999), BACKOFF_MAX_MS);
  assert.equal(nextBackoff(BACKOFF_MAX_MS, STABLE_MS + 1), 0);
  assert.equal(nextBackoff(0, 10), BACKOFF_MIN_MS);
});

test('verify after a sleep: a connection that answers is kept', async () => {
  const d = new FakeDevContainer();
  const r = started(d);
  const c = await r.connection(1000);
  assert.equal(await r.verify(async () => undefined, 200), true);
  assert.equal(c.ended, false);
  assert.equal(await r.connection(), c);
});

test('verify after a sleep: a connection that does not answer in time is dropped and dialled again at once', async () => {
  const d = new FakeDevContainer();
  const r = started(d);
  const c = await r.connection(1000);
  d.livesMs = STABLE_MS + 1;
  const t0 = Date.now();
  assert.equal(await r.verify(() => new Promise(() => undefined), 50), false);
  assert.ok(Date.now() - t0 < 1000);
  assert.equal(c.destroyed, true, 'destroyed, not ended: a goodbye would never get through a dead path');
  await eventually('a new connection', () => d.connections.length === 2);
  assert.equal((await r.connection(1000)).id, 2);
  assert.equal(d.waits.at(-1), 0, 'dialled again without a wait');
});

test('verify: a probe that cannot be sent counts as no answer; with no connection there is nothing to check', async () => {
  const d = new FakeDevContainer();
  const r = started(d);
  const c = await r.connection(1000);
  assert.equal(await r.verify(() => Promise.reject(new Error('Not connected')), 1000), false);
  assert.equal(c.destroyed, true);
  d.reachable = false;
  await eventually('the drop is noticed', () => d.notices.length === 1);
  assert.equal(await r.verify(async () => undefined, 50), false);
});

test('verify: an answer that arrives while the event loop is busy past the deadline still counts (busy is not dead)', async () => {
  const d = new FakeDevContainer();
  const r = started(d);
  const c = await r.connection(1000);
  // The answer comes through a socket pair, as it does through the port-forward's and SSH's
  // sockets; the event loop is blocked past the deadline before either is read.
  const { createServer, connect } = await import('node:net');
  const server = createServer((s) => s.end('pong'));
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const port = (server.address() as { port: number }).port;
  const answered = r.verify(
    () =>
      new Promise<void>((resolve, reject) => {
        connect(port, '127.0.0.1')
          .once('data', () => resolve())
          .once('error', reject);
      }),
    5,
  );
  const until = Date.now() + VERIFY_GRACE_MS + 100;
  while (Date.now() < until) {
    // blocked, as a synchronous read of many files blocks it
  }
  try {
    assert.equal(await answered, true);
    assert.equal(c.destroyed, false);
  } finally {
    server.close();
  }
});
