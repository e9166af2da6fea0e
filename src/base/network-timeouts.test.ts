import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectTimeoutText, DEFAULT_NETWORK_TIMEOUTS, networkTimeouts, responseTimeoutText, TIMEOUT_TEXT } from './network-timeouts.ts';

test('without the variables, every request waits 10s for a connection and 30s for the answer', () => {
  assert.deepEqual(networkTimeouts({}), { connectMs: 10_000, responseMs: 30_000 });
  assert.deepEqual(networkTimeouts({ DEVTOOL_CONNECT_TIMEOUT: ' ', DEVTOOL_RESPONSE_TIMEOUT: '' }), DEFAULT_NETWORK_TIMEOUTS);
});

test('the variables take Go durations', () => {
  assert.deepEqual(networkTimeouts({ DEVTOOL_CONNECT_TIMEOUT: '2s', DEVTOOL_RESPONSE_TIMEOUT: '1m30s' }), { connectMs: 2000, responseMs: 90_000 });
  assert.deepEqual(networkTimeouts({ DEVTOOL_CONNECT_TIMEOUT: '500ms' }), { connectMs: 500, responseMs: 30_000 });
});

test('a value that is not a duration above zero is refused, naming the variable', () => {
  assert.throws(() => networkTimeouts({ DEVTOOL_CONNECT_TIMEOUT: '10' }), {
    message: 'invalid DEVTOOL_CONNECT_TIMEOUT "10": expected a duration above zero, such as 10s or 1m',
  });
  assert.throws(() => networkTimeouts({ DEVTOOL_RESPONSE_TIMEOUT: '0' }), /^UsageError|invalid DEVTOOL_RESPONSE_TIMEOUT "0"/);
});

test('the timeout texts name the wait and the variable that sets it', () => {
  assert.equal(connectTimeoutText(10_000), 'no connection within 10s; DEVTOOL_CONNECT_TIMEOUT sets the wait');
  assert.equal(connectTimeoutText(1500, 'TLS handshake'), 'no TLS handshake within 1.5s; DEVTOOL_CONNECT_TIMEOUT sets the wait');
  assert.equal(responseTimeoutText(30_000), 'no answer within 30s; DEVTOOL_RESPONSE_TIMEOUT sets the wait');
  for (const text of [connectTimeoutText(1), responseTimeoutText(2)]) assert.match(text, TIMEOUT_TEXT);
});
