import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from './duration.ts';

test('parses Go-style durations to milliseconds', () => {
  assert.equal(parseDuration('1s'), 1000);
  assert.equal(parseDuration('2m'), 120_000);
  assert.equal(parseDuration('5m0s'), 300_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1.5h'), 5_400_000);
  assert.equal(parseDuration('300ms'), 300);
  assert.equal(parseDuration('0'), 0);
});

test('rejects numbers without a unit and garbage', () => {
  for (const bad of ['300', '', '5x', 'm', '1h 30m', '-1s', '1s2', 'abc', '1.2.3s']) {
    assert.equal(parseDuration(bad), undefined, bad);
  }
});

test('formats like Go', () => {
  assert.equal(formatDuration(300_000), '5m0s');
  assert.equal(formatDuration(5_400_000), '1h30m0s');
  assert.equal(formatDuration(1500), '1.5s');
  assert.equal(formatDuration(250), '250ms');
  assert.equal(formatDuration(0), '0s');
});

test('format and parse round-trip', () => {
  for (const ms of [1, 999, 1000, 61_000, 3_600_000, 7_384_500]) {
    assert.equal(parseDuration(formatDuration(ms)), ms);
  }
});
