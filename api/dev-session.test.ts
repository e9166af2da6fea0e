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
} from './dev-session.ts';

const session: DevSessionState = {
  format: 1,
  user: 'alice',
  version: '0.1.0',
  startedAt: '2026-12-02T13:00:00.000Z',
  heartbeatAt: '2026-12-02T13:00:30.000Z',
  sync: { state: 'syncing', toReceive: 2, toSend: 0 },
  conflicts: { total: 1, latest: ['./src/app.sync-conflict-20261202-130010-ABCDEFG.js'] },
  forwards: [{ local: 8080, remote: 'web:80' }],
  connection: { state: 'connected' },
};

const encoded = (x: unknown) => JSON.stringify(x);
/** `session` with one field replaced (undefined: removed). */
const withField = (key: string, value: unknown) => {
  const copy: Record<string, unknown> = { ...session };
  if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
};

test('a well-formed session state decodes to itself, ended or not', () => {
  assert.deepEqual(decodeDevSession(encoded(session)), session);
  const ended = {
    ...session,
    endedAt: '2026-12-02T13:05:00Z',
    sync: { state: 'watching' },
    connection: { state: 'reconnecting', since: '2026-12-02T13:04:00Z' },
  };
  assert.deepEqual(decodeDevSession(encoded(ended)), ended);
  for (const sync of [{ state: 'off' }, { state: 'starting' }, { state: 'error', error: 'folder marker missing' }])
    assert.deepEqual(decodeDevSession(encoded({ ...session, sync }))?.sync, sync);
});

test('anything but a string of JSON is refused', () => {
  for (const value of [undefined, null, 42, {}, session, '', 'not json', '{"format":1', 'null', '[]', '"text"'])
    assert.equal(decodeDevSession(value), undefined, String(value));
});

test('a value over the bound is refused before it is parsed, counted in bytes of UTF-8', () => {
  const padded = (n: number, pad: string) => `${encoded(session)}${pad.repeat(n)}`;
  // Trailing spaces are valid JSON: only the bound refuses these.
  assert.ok(decodeDevSession(padded(DEV_SESSION_MAX_BYTES - encoded(session).length, ' ')));
  assert.equal(decodeDevSession(padded(DEV_SESSION_MAX_BYTES - encoded(session).length + 1, ' ')), undefined);
  // Fewer characters than the bound, more bytes.
  const accented = encoded({ ...session, user: 'é'.repeat(60) });
  assert.ok(decodeDevSession(accented));
  const wide = accented + ' '.repeat(DEV_SESSION_MAX_BYTES - accented.length);
  assert.equal(wide.length, DEV_SESSION_MAX_BYTES);
  assert.equal(decodeDevSession(wide), undefined);
});

test('a field missing, extra, of the wrong type or over its bound is refused', () => {
  const cases: [string, unknown][] = [
    ['format', 2],
    ['format', undefined],
    ['user', ''],
    ['user', 'u'.repeat(64)],
    ['user', 7],
    ['version', undefined],
    ['startedAt', 'yesterday'],
    ['heartbeatAt', '2026-12-02 13:00:30'],
    ['endedAt', 0],
    ['sync', { state: 'syncing', toReceive: -1, toSend: 0 }],
    ['sync', { state: 'syncing', toReceive: 1.5, toSend: 0 }],
    ['sync', { state: 'syncing', toReceive: 1 }],
    ['sync', { state: 'error', error: 'x'.repeat(DEV_SESSION_LINE_MAX + 1) }],
    ['sync', { state: 'error', error: '' }],
    ['sync', { state: 'watching', detail: 'extra' }],
    ['sync', { state: 'paused' }],
    ['conflicts', { total: 1 }],
    ['conflicts', { total: 6, latest: Array.from({ length: DEV_SESSION_CONFLICTS_MAX + 1 }, (_, i) => `c${i}`) }],
    ['conflicts', { total: 1, latest: ['p'.repeat(DEV_SESSION_PATH_MAX + 1)] }],
    ['forwards', [{ local: 0, remote: 'web:80' }]],
    ['forwards', [{ local: 70000, remote: 'web:80' }]],
    ['forwards', [{ local: 8080, remote: 'web:80', bind: '0.0.0.0' }]],
    ['forwards', Array.from({ length: DEV_SESSION_FORWARDS_MAX + 1 }, (_, i) => ({ local: 8000 + i, remote: 'web:80' }))],
    ['connection', { state: 'reconnecting' }],
    ['connection', 'connected'],
    ['admin', true],
  ];
  for (const [key, value] of cases) assert.equal(decodeDevSession(encoded(withField(key, value))), undefined, `${key}: ${JSON.stringify(value)}`);
});

test('a "__proto__" key written into the JSON is an extra field, refused', () => {
  const hostile = encoded(session).replace('{', '{"__proto__":{"admin":true},');
  assert.equal(decodeDevSession(hostile), undefined);
});
