import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEV_SESSION_CONFLICTS_MAX,
  DEV_SESSION_FORWARDS_MAX,
  DEV_SESSION_LINE_MAX,
  DEV_SESSION_MAX_BYTES,
  DEV_SESSION_PATH_MAX,
  type DevSessionState,
  decodeDevSession,
  devSessionBytes,
} from '../../api/dev-session.ts';
import { sessionAnnotationValue, sessionUser } from './session-state.ts';

const typical: DevSessionState = {
  format: 1,
  user: 'alice',
  version: '0.1.0',
  startedAt: '2026-12-02T13:00:00.000Z',
  heartbeatAt: '2026-12-02T13:20:30.000Z',
  sync: { state: 'watching' },
  conflicts: { total: 2, latest: ['./src/app.sync-conflict-20261202-130512-ABCDEFG.ts', './src/util.sync-conflict-20261202-131003-ABCDEFG.ts'] },
  forwards: [
    { local: 8080, remote: 'web:80' },
    { local: 5432, remote: 'db:5432' },
  ],
  connection: { state: 'connected' },
};

test('a typical session: its JSON as it is, some 450 bytes', () => {
  const value = sessionAnnotationValue(typical);
  assert.deepEqual(JSON.parse(value), typical);
  assert.deepEqual(decodeDevSession(value), typical);
  assert.ok(devSessionBytes(value) < 500, `${devSessionBytes(value)} bytes`);
});

test('every field over its bound is cut, and the value still decodes', () => {
  const long: DevSessionState = {
    ...typical,
    user: 'u'.repeat(500),
    version: 'v'.repeat(500),
    sync: { state: 'error', error: `folder path missing\n${'x'.repeat(1000)}` },
    conflicts: { total: 1000, latest: Array.from({ length: 40 }, (_, i) => `./${'deep/'.repeat(100)}f${i}.sync-conflict-20261202-130512-ABCDEFG.ts`) },
    forwards: Array.from({ length: 100 }, (_, i) => ({ local: 1000 + i, remote: `${'s'.repeat(200)}:${i}` })),
  };
  const value = sessionAnnotationValue(long);
  const back = decodeDevSession(value);
  assert.ok(back, value);
  assert.ok(devSessionBytes(value) <= DEV_SESSION_MAX_BYTES);
  assert.equal(back.conflicts.total, 1000);
  assert.equal(back.conflicts.latest.length, DEV_SESSION_CONFLICTS_MAX);
  // The end of a path names the file: that part is kept, the newest conflicts kept.
  assert.ok(back.conflicts.latest.every((p) => p.length <= DEV_SESSION_PATH_MAX && p.startsWith('…')));
  assert.match(back.conflicts.latest.at(-1)!, /\/f39\.sync-conflict-20261202-130512-ABCDEFG\.ts$/);
  assert.equal(back.forwards.length, DEV_SESSION_FORWARDS_MAX);
  assert.equal(back.forwards[0]!.local, 1000);
  assert.ok(back.sync.state === 'error' && back.sync.error.length === DEV_SESSION_LINE_MAX && !back.sync.error.includes('\n'));
});

test('characters that JSON escapes or UTF-8 widens: the lists give way, the value stays within the bound', () => {
  const wide: DevSessionState = {
    ...typical,
    user: '\u0001'.repeat(63),
    version: '\u0002'.repeat(64),
    sync: { state: 'error', error: '\u0003'.repeat(300) },
    conflicts: { total: 5, latest: Array.from({ length: 5 }, () => '\u0004'.repeat(200)) },
    forwards: Array.from({ length: 16 }, (_, i) => ({ local: 1 + i, remote: '𝄞'.repeat(40) })),
  };
  const value = sessionAnnotationValue(wide);
  assert.ok(devSessionBytes(value) <= DEV_SESSION_MAX_BYTES, `${devSessionBytes(value)} bytes`);
  const back = decodeDevSession(value);
  assert.ok(back);
  // Oldest conflicts went first.
  assert.ok(back.conflicts.latest.length < 5);
});

test('the user: the service user of a service context, else the local user name', () => {
  assert.equal(
    sessionUser({ isDevtool: true, userId: 'alice' }, () => 'root'),
    'alice',
  );
  assert.equal(
    sessionUser({ isDevtool: false }, () => 'bob'),
    'bob',
  );
  assert.equal(
    sessionUser({ isDevtool: true }, () => 'bob'),
    'bob',
  );
  assert.equal(
    sessionUser({ isDevtool: false }, () => {
      throw new Error('no passwd entry');
    }),
    'unknown',
  );
});
