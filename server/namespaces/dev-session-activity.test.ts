import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEV_SESSION_ANNOTATION, type DevSessionState } from '../../api/dev-session.ts';
import { devSessionActivity } from './dev-session-activity.ts';

const NOW = new Date('2026-12-02T14:00:00.000Z');
const state: DevSessionState = {
  format: 1,
  user: 'alice',
  version: '1.0.0',
  startedAt: '2026-12-02T12:00:00.000Z',
  heartbeatAt: '2026-12-02T13:00:30.000Z',
  sync: { state: 'watching' },
  conflicts: { total: 0, latest: [] },
  forwards: [],
  connection: { state: 'connected' },
};
const dev = (replicas: number, annotation?: string) => ({
  metadata: { name: 'web-devtool', ...(annotation === undefined ? {} : { annotations: { [DEV_SESSION_ANNOTATION]: annotation } }) },
  spec: { replicas, selector: {}, template: {} },
});

test("the session's heartbeat, or its end when later, is the dev container's activity", () => {
  assert.equal(devSessionActivity(dev(1, JSON.stringify(state)), NOW), '2026-12-02T13:00:30.000Z');
  assert.equal(devSessionActivity(dev(1, JSON.stringify({ ...state, endedAt: '2026-12-02T13:00:40.000Z' })), NOW), '2026-12-02T13:00:40.000Z');
  assert.equal(devSessionActivity(dev(0, JSON.stringify(state)), NOW), '2026-12-02T13:00:30.000Z', 'asleep or not: the last heartbeat');
});

test('without the annotation a running dev Deployment is used now; a malformed one tells nothing', () => {
  assert.equal(devSessionActivity(dev(1), NOW), NOW.toISOString());
  assert.equal(devSessionActivity(dev(0), NOW), undefined, 'scaled to zero: no up runs there');
  assert.equal(devSessionActivity(dev(1, '{"format":1}'), NOW), undefined);
  assert.equal(devSessionActivity(dev(1, 'not json'), NOW), undefined);
});
