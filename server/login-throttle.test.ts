import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountLoginThrottle } from './login-throttle.ts';

test('an account is refused after max failures in the window, until the oldest leaves it', () => {
  const clock = { t: 0 };
  const t = new AccountLoginThrottle({ max: 3, timeWindowMs: 60_000 }, () => new Date(clock.t));
  for (let i = 0; i < 3; i++) {
    assert.equal(t.retryAfterSec('alice'), 0);
    t.failed('alice');
    clock.t += 10_000;
  }
  assert.equal(t.retryAfterSec('alice'), 30);
  assert.equal(t.retryAfterSec('bob'), 0, 'another account is not affected');
  clock.t = 60_001;
  assert.equal(t.retryAfterSec('alice'), 0, 'the first failure left the window');
  t.failed('alice');
  assert.ok(t.retryAfterSec('alice') > 0);
  t.succeeded('alice');
  assert.equal(t.retryAfterSec('alice'), 0, 'a success clears the count');
});

test('memory stays bounded: the oldest accounts are forgotten', () => {
  const t = new AccountLoginThrottle({ max: 1, timeWindowMs: 60_000 }, () => new Date(0), 2);
  t.failed('a');
  t.failed('b');
  t.failed('c');
  assert.equal(t.retryAfterSec('a'), 0);
  assert.ok(t.retryAfterSec('b') > 0 && t.retryAfterSec('c') > 0);
});
