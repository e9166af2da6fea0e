import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NamespaceRecord } from '../store/store.ts';
import { namespaceBody } from './view.ts';

const base: NamespaceRecord = { name: 'shop', owner: 'alice', personal: false, status: 'Active', createdAt: '2026-05-01T00:00:00.000Z' };
const idle = { sleepAfterMs: 3_600_000, deleteAfterMs: 86_400_000 };

test('awake: no sleep; the next automatic sleep and deletion as RFC 3339 times, only with the settings', () => {
  assert.deepEqual(namespaceBody(base, {}), { name: 'shop', status: 'Active', owner: 'alice', personal: false });
  assert.deepEqual(namespaceBody({ ...base, marks: { lastRequest: '2026-05-01T02:00:00.000Z' } }, idle), {
    name: 'shop',
    status: 'Active',
    owner: 'alice',
    personal: false,
    sleepsAt: '2026-05-01T03:00:00.000Z',
    deletesAt: '2026-05-02T02:00:00.000Z',
  });
});

test('sleeping, by whom; waking; a sleeping preview shows its own sleep', () => {
  const asleep = namespaceBody({ ...base, marks: { sleepingSince: '2026-05-01T04:00:00.000Z', sleptBy: 'idle' } }, idle);
  assert.deepEqual(asleep.sleep, { state: 'Sleeping', since: '2026-05-01T04:00:00.000Z', by: 'idle' });
  assert.equal(asleep.sleepsAt, undefined, 'asleep: no next sleep');
  const waking = namespaceBody({ ...base, marks: { wakingSince: '2026-05-01T05:00:00.000Z', wokenAt: '2026-05-01T05:00:00.000Z' } }, idle);
  assert.deepEqual([waking.sleep, waking.sleepsAt], [{ state: 'Waking', since: '2026-05-01T05:00:00.000Z' }, '2026-05-01T06:00:00.000Z']);
  const preview = { ...base, preview: { scope: 'personal' as const, pipeline: 'app', deployedAt: base.createdAt!, sleepingSince: '2026-05-01T01:00:00.000Z' } };
  assert.deepEqual(namespaceBody(preview, idle), { ...namespaceBody(base, {}), sleep: { state: 'Sleeping', since: '2026-05-01T01:00:00.000Z' } });
});
