import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Namespace } from '@kubernetes/client-node';
import { LAST_REQUEST } from '../api/namespace-sleep.ts';
import { type ActivityWrite, ActivityRecorder, activityWrites, FileTail, lastRequests, SERVICE_LABEL } from './activity.ts';

const T0 = Date.parse('2026-12-02T12:00:00Z');
/** An access log line as Caddy 2.6 writes it (the fields read, and some others). */
const line = (host: string, atMs: number) =>
  JSON.stringify({ level: 'info', ts: atMs / 1000, logger: 'http.log.access.front-door', request: { proto: 'HTTP/2.0', method: 'GET', host }, status: 200 });
const owners = new Map([
  ['web-a.devtool.test', 'a'],
  ['api-a.devtool.test', 'a'],
  ['web-b.devtool.test', 'b'],
]);
const ns = (name: string, o: { service?: string; lastRequest?: string } = {}): V1Namespace => ({
  metadata: {
    name,
    labels: o.service === undefined ? {} : { [SERVICE_LABEL]: o.service },
    annotations: o.lastRequest === undefined ? {} : { [LAST_REQUEST]: o.lastRequest },
  },
});

test('the latest request per namespace, from the hosts of complete JSON lines', () => {
  const seen = lastRequests(
    [
      line('web-a.devtool.test', T0),
      line('API-A.devtool.test:443', T0 + 5_000),
      line('web-a.devtool.test', T0 + 1_000),
      line('web-b.devtool.test', T0 + 2_000),
      line('made-up.example.com', T0 + 9_000),
      '{"ts": 1, "request": {}}',
      'not json',
    ],
    (h) => owners.get(h),
  );
  assert.deepEqual(
    [...seen],
    [
      ['a', T0 + 5_000],
      ['b', T0 + 2_000],
    ],
  );
});

test('only namespaces this release made, at most once a minute', () => {
  const seen = new Map([
    ['ours', T0],
    ['recent', T0],
    ['stale', T0],
    ['other-release', T0],
    ['unlabelled', T0],
    ['gone', T0],
    ['written-here', T0],
  ]);
  const namespaces = [
    ns('ours', { service: 'devtool' }),
    ns('recent', { service: 'devtool', lastRequest: new Date(T0 - 59_000).toISOString() }),
    ns('stale', { service: 'devtool', lastRequest: new Date(T0 - 60_000).toISOString() }),
    ns('other-release', { service: 'devtool-2' }),
    ns('unlabelled'),
    ns('written-here', { service: 'devtool' }),
  ];
  const writes = activityWrites(seen, namespaces, new Map([['written-here', T0 - 30_000]]), 'devtool', T0 + 1_000);
  assert.deepEqual(writes, [
    { namespace: 'ours', at: '2026-12-02T12:00:00.000Z' },
    { namespace: 'stale', at: '2026-12-02T12:00:00.000Z' },
  ]);
});

test('the recorder writes once a minute, retries a failed write and keeps nothing else', async () => {
  let fail = 1;
  const records: ActivityWrite[] = [];
  const logs: string[] = [];
  const namespaces = [ns('a', { service: 'devtool' }), ns('b', { service: 'devtool' })];
  const recorder = new ActivityRecorder(
    {
      namespaces: () => namespaces,
      record: async (w) => {
        if (w.namespace === 'b' && fail-- > 0) throw new Error('the server is currently unable to handle the request');
        records.push(w);
      },
    },
    'devtool',
    (l) => logs.push(l),
  );
  const of = (h: string) => owners.get(h);
  await recorder.pass([line('web-a.devtool.test', T0), line('web-b.devtool.test', T0)], of, T0 + 1_000);
  assert.deepEqual(records, [{ namespace: 'a', at: '2026-12-02T12:00:00.000Z' }]);
  assert.equal(logs.length, 1);
  // The next pass: b again (the failed one), a not (written 10 s ago), though a had a new request.
  await recorder.pass([line('web-a.devtool.test', T0 + 10_000)], of, T0 + 11_000);
  assert.deepEqual(
    records.map((r) => r.namespace),
    ['a', 'b'],
  );
  // A minute later, a's later request is written.
  await recorder.pass([line('web-a.devtool.test', T0 + 70_000)], of, T0 + 71_000);
  assert.deepEqual(records.at(-1), { namespace: 'a', at: '2026-12-02T12:01:10.000Z' });
});

test("the tail reads appended complete lines and follows a roll without losing the old file's end", () => {
  const dir = mkdtempSync(join(tmpdir(), 'tail-'));
  try {
    const file = join(dir, 'access.log');
    const tail = new FileTail(file);
    assert.deepEqual(tail.read(), [], 'no file yet');
    writeFileSync(file, 'one\ntw');
    assert.deepEqual(tail.read(), ['one']);
    appendFileSync(file, 'o\nthree\n');
    assert.deepEqual(tail.read(), ['two', 'three']);
    appendFileSync(file, 'four\n');
    // Caddy's roll: the file renamed, a new one made under the name.
    renameSync(file, join(dir, 'access-1.log'));
    writeFileSync(file, 'five\n');
    assert.deepEqual(tail.read(), ['four', 'five']);
    assert.deepEqual(tail.read(), []);
    // The budget bounds one read; the rest comes with the next.
    appendFileSync(file, 'six\nseven\n');
    assert.deepEqual(tail.read(4), ['six']);
    assert.deepEqual(tail.read(), ['seven']);
    tail.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
