import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NamespaceRecord } from '../store/store.ts';
import { idleDecision, idleSchedule, lastActivityOf, latest } from './idle.ts';

const H = 3_600_000;
const T0 = Date.parse('2026-05-01T00:00:00.000Z');
const at = (h: number) => new Date(T0 + h * H).toISOString();
const ns = (over: Partial<NamespaceRecord> = {}): NamespaceRecord => ({
  name: 'shop',
  owner: 'alice',
  personal: false,
  status: 'Active',
  createdAt: at(0),
  ...over,
});
const settings = { sleepAfterMs: 3 * H, deleteAfterMs: 14 * 24 * H };

test('the latest activity: the marks, or else the creation; unreadable times are skipped', () => {
  assert.equal(latest([undefined, 'nonsense', at(2), at(1)]), T0 + 2 * H);
  assert.equal(latest([]), undefined);
  assert.equal(lastActivityOf(ns()), T0);
  assert.equal(lastActivityOf(ns({ marks: { lastActivity: at(1), lastRequest: at(4), wokenAt: at(2) } })), T0 + 4 * H);
  assert.equal(lastActivityOf(ns({ marks: { wokenAt: at(5) } })), T0 + 5 * H, 'a wake counts');
});

test('the schedule: sleep and deletion counted from the last activity', () => {
  const used = ns({ marks: { lastActivity: at(10) } });
  assert.deepEqual(idleSchedule(used, settings), { sleepsAt: T0 + 13 * H, deletesAt: T0 + (10 + 14 * 24) * H });
  assert.deepEqual(idleSchedule(used, {}), {}, 'off by default');
  assert.deepEqual(idleSchedule(ns({ marks: { sleepingSince: at(11) } }), settings), { deletesAt: T0 + 14 * 24 * H }, 'asleep: no next sleep');
  assert.deepEqual(idleSchedule(ns({ personal: true }), settings), { sleepsAt: T0 + 3 * H }, 'a personal namespace only sleeps');
  assert.deepEqual(idleSchedule(ns({ status: 'Terminating' }), settings), {});
  assert.deepEqual(idleSchedule(ns({ preview: { scope: 'personal', pipeline: 'app', deployedAt: at(0) } }), settings), {}, 'previews have their own');
});

test('the decision: nothing, sleep, or delete, at the exact times', () => {
  const n = ns({ marks: { lastActivity: at(1) } });
  assert.equal(idleDecision(n, settings, new Date(T0 + 4 * H - 1)), undefined);
  assert.equal(idleDecision(n, settings, new Date(T0 + 4 * H)), 'sleep');
  const asleep = ns({ marks: { lastActivity: at(1), sleepingSince: at(4), sleptBy: 'idle' } });
  assert.equal(idleDecision(asleep, settings, new Date(T0 + 100 * H)), undefined, 'asleep: nothing more until the deletion');
  assert.equal(idleDecision(asleep, settings, new Date(T0 + (1 + 14 * 24) * H)), 'delete');
  assert.equal(idleDecision(ns({ personal: true, marks: { sleepingSince: at(4) } }), settings, new Date(T0 + 1000 * H)), undefined, 'personal: never deleted');
  assert.equal(idleDecision(n, { deleteAfterMs: 2 * H }, new Date(T0 + 3 * H)), 'delete', 'deletion alone');
});
