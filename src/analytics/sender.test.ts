import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, test } from 'node:test';
import { runCli } from '../cli/run.ts';
import { rootCommand } from '../commands/index.ts';
import { DevtoolHome } from '../home.ts';
import type { AnalyticsRecord } from './analytics.ts';
import { DEFAULT_FLUSH, type FlushOptions, flushDue, flushSpool } from './sender.ts';

const root = mkdtempSync(join(tmpdir(), 'devtool-sender-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const NOW = new Date('2030-01-02T03:04:05.000Z');

function record(i: number, timestamp = NOW.toISOString()): AnalyticsRecord {
  return { action: 'deploy', timestamp, version: '1', os: 'linux/x64', machineId: 'm', actionId: `a${i}`, success: true };
}

function spoolWith(records: AnalyticsRecord[]): string {
  const dir = join(root, `s${n++}`);
  mkdirSync(dir);
  const path = join(dir, 'analytics-spool.jsonl');
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return path;
}

const ids = (path: string) =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as AnalyticsRecord).actionId)
    : [];

function options(over: Partial<FlushOptions> = {}): FlushOptions & { notes: string[] } {
  const notes: string[] = [];
  return { ...DEFAULT_FLUSH, now: () => NOW, note: (m) => notes.push(m), notes, ...over };
}

describe('the analytics queue', () => {
  test('sends in batches of batchSize, at most maxBatches per run; the rest stays in order', async () => {
    const spool = spoolWith(Array.from({ length: 250 }, (_, i) => record(i)));
    const sizes: number[] = [];
    const sent = await flushSpool(spool, async (r) => void sizes.push(r.length), options({ batchSize: 100, maxBatches: 2 }));
    assert.equal(sent, 200);
    assert.deepEqual(sizes, [100, 100]);
    assert.deepEqual(
      ids(spool),
      Array.from({ length: 50 }, (_, i) => `a${200 + i}`),
    );
    const more = await flushSpool(spool, async (r) => void sizes.push(r.length), options({ batchSize: 100, maxBatches: 2 }));
    assert.equal(more, 50);
    assert.deepEqual(ids(spool), []);
  });

  test('due: enough records, or an old one; not before', () => {
    assert.equal(flushDue(spoolWith([record(1), record(2)]), options({ dueRecords: 3 })), false);
    assert.equal(flushDue(spoolWith([record(1), record(2), record(3)]), options({ dueRecords: 3 })), true);
    const old = new Date(NOW.getTime() - 11 * 60_000).toISOString();
    assert.equal(flushDue(spoolWith([record(1, old)]), options({ dueRecords: 3, dueAgeMs: 10 * 60_000 })), true);
    assert.equal(flushDue(join(root, 'none.jsonl'), options()), false);
  });

  test('a failed send keeps every record and waits retryAfterMs before the next try', async () => {
    const spool = spoolWith([record(1), record(2), record(3)]);
    const o = options({ dueRecords: 1 });
    const sent = await flushSpool(
      spool,
      async () => {
        throw new Error('cannot reach the devtool service: nothing listens there (ECONNREFUSED)');
      },
      o,
    );
    assert.equal(sent, 0);
    assert.deepEqual(ids(spool), ['a1', 'a2', 'a3']);
    assert.match(o.notes.join('\n'), /kept for later.*ECONNREFUSED/);
    assert.equal(flushDue(spool, o), false, 'retried at once after a failure');
    const marker = `${spool}.failed`;
    const later = { ...o, now: () => new Date(NOW.getTime() + DEFAULT_FLUSH.retryAfterMs + 1000) };
    assert.equal(flushDue(spool, later), true);
    await flushSpool(spool, async () => undefined, o);
    assert.equal(existsSync(marker), false, 'a success clears the back-off');
  });

  test('a batch the service refuses (4xx) is dropped, not retried forever; damaged lines are dropped', async () => {
    const spool = spoolWith([record(1), record(2)]);
    writeFileSync(spool, `${readFileSync(spool, 'utf8')}{not json\n`);
    const o = options({ batchSize: 1 });
    let calls = 0;
    const sent = await flushSpool(
      spool,
      async () => {
        calls++;
        if (calls === 1) throw Object.assign(new Error('body.records.0.action: invalid'), { status: 400 });
      },
      o,
    );
    assert.equal(sent, 1);
    assert.deepEqual(ids(spool), []);
    assert.match(o.notes.join('\n'), /1 damaged record/);
    assert.match(o.notes.join('\n'), /refused by the service and dropped/);
  });

  test('records spooled while a flush runs are kept after the unsent ones', async () => {
    const spool = spoolWith([record(1), record(2)]);
    await flushSpool(
      spool,
      async () => {
        writeFileSync(spool, `${JSON.stringify(record(9))}\n`); // another command's record, meanwhile
        throw new Error('offline');
      },
      options(),
    );
    assert.deepEqual(ids(spool), ['a1', 'a2', 'a9']);
  });
});

/** A service stand-in on loopback: answers POST /api/v1/analytics after `delayMs`, counts what it got. */
async function fakeService(delayMs: number): Promise<{ url: string; received: AnalyticsRecord[][]; server: Server }> {
  const received: AnalyticsRecord[][] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      setTimeout(() => {
        if (req.url === '/api/v1/analytics') received.push((JSON.parse(body) as { records: AnalyticsRecord[] }).records);
        res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1}');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

async function run(env: NodeJS.ProcessEnv, argv: string[]): Promise<number> {
  const out = new PassThrough();
  out.resume();
  return runCli(argv, rootCommand, { io: { stdin: new PassThrough(), stdout: out, stderr: out }, env, cwd: root });
}

function homeWithService(url: string, records: number): { env: NodeJS.ProcessEnv; home: DevtoolHome } {
  const dir = join(root, `home${n++}`);
  const home = new DevtoolHome(dir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(home.contextsFile, JSON.stringify({ current: url, contexts: { [url]: { name: url, isDevtool: true, token: 'dvt_x', userId: 'u' } } }));
  writeFileSync(home.analyticsSpool, Array.from({ length: records }, (_, i) => `${JSON.stringify(record(i))}\n`).join(''));
  return { env: { DEVTOOL_HOME: dir, HOME: dir, PATH: process.env.PATH, KUBECONFIG: join(dir, 'none') }, home };
}

describe('sending at the end of a command', () => {
  test("a due batch goes to the current service, with the command's own record", async () => {
    const svc = await fakeService(0);
    try {
      const { env, home } = homeWithService(svc.url, 12);
      assert.equal(await run(env, ['version']), 0);
      assert.equal(svc.received.length, 1);
      assert.equal(svc.received[0]!.length, 13);
      assert.equal(svc.received[0]!.at(-1)!.action, 'version');
      assert.deepEqual(ids(home.analyticsSpool), []);
    } finally {
      svc.server.close();
    }
  });

  test('a service that does not answer delays the end of a command by a bounded time only', async () => {
    const svc = await fakeService(60_000);
    try {
      const { env, home } = homeWithService(svc.url, 12);
      const started = Date.now();
      assert.equal(await run(env, ['version']), 0);
      const took = Date.now() - started;
      assert.ok(took < 4000, `took ${took} ms`);
      assert.equal(ids(home.analyticsSpool).length, 13, 'records kept for later');
      const again = Date.now();
      assert.equal(await run(env, ['version']), 0);
      assert.ok(Date.now() - again < 1000, 'retried at once after a timeout');
    } finally {
      svc.server.closeAllConnections();
      svc.server.close();
    }
  });

  test('disabled (DEVTOOL_DISABLE_ANALYTICS=1, or analytics --disable): nothing is sent', async () => {
    const svc = await fakeService(0);
    try {
      const one = homeWithService(svc.url, 12);
      assert.equal(await run({ ...one.env, DEVTOOL_DISABLE_ANALYTICS: '1' }, ['version']), 0);
      const two = homeWithService(svc.url, 12);
      assert.equal(await run(two.env, ['analytics', '--disable']), 0);
      assert.equal(await run(two.env, ['version']), 0);
      assert.equal(svc.received.length, 0);
    } finally {
      svc.server.close();
    }
  });

  test('a hidden command (kubetoken, which kubectl runs on every request) is no record and sends nothing', async () => {
    const svc = await fakeService(0);
    try {
      const { env, home } = homeWithService(svc.url, 12);
      await run(env, ['kubetoken', '--context', svc.url]);
      assert.equal(svc.received.length, 0);
      assert.equal(ids(home.analyticsSpool).length, 12);
    } finally {
      svc.server.close();
    }
  });

  test('a plain cluster context (no service): nothing is sent, records stay local', async () => {
    const svc = await fakeService(0);
    try {
      const { env, home } = homeWithService(svc.url, 12);
      writeFileSync(home.contextsFile, JSON.stringify({ current: 'kind-local', contexts: { 'kind-local': { name: 'kind-local', isDevtool: false } } }));
      assert.equal(await run(env, ['version']), 0);
      assert.equal(svc.received.length, 0);
      assert.equal(ids(home.analyticsSpool).length, 13);
    } finally {
      svc.server.close();
    }
  });
});
