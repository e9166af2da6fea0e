import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { BuildkitBackend, buildkitAddress, keepaliveSettings } from './buildkit.ts';

test('BUILDKIT_HOST as HOST:PORT means tcp://HOST:PORT', () => {
  assert.equal(buildkitAddress({ BUILDKIT_HOST: '127.0.0.1:1234' }), 'tcp://127.0.0.1:1234');
  assert.equal(buildkitAddress({ BUILDKIT_HOST: ' buildkitd.example:9999 ' }), 'tcp://buildkitd.example:9999');
  assert.equal(buildkitAddress({ BUILDKIT_HOST: '[::1]:1234' }), 'tcp://[::1]:1234');
});

test('BUILDKIT_HOST in BuildKit full forms is kept', () => {
  assert.equal(buildkitAddress({ BUILDKIT_HOST: 'tcp://10.1.2.3:1234' }), 'tcp://10.1.2.3:1234');
  assert.equal(buildkitAddress({ BUILDKIT_HOST: 'unix:///run/buildkit/buildkitd.sock' }), 'unix:///run/buildkit/buildkitd.sock');
});

test('BUILDKIT_HOST wins over the context builder; a tcp:// builder is used without it', () => {
  assert.equal(buildkitAddress({ BUILDKIT_HOST: 'a:1' }, 'tcp://b:2'), 'tcp://a:1');
  assert.equal(buildkitAddress({}, 'tcp://b:2'), 'tcp://b:2');
  assert.equal(buildkitAddress({ BUILDKIT_HOST: '  ' }, 'tcp://b:2'), 'tcp://b:2');
});

test('no BUILDKIT_HOST and no tcp:// builder: not a BuildKit build', () => {
  assert.equal(buildkitAddress({}), undefined);
  assert.equal(buildkitAddress({}, undefined), undefined);
  assert.equal(buildkitAddress({}, 'docker'), undefined);
  assert.equal(buildkitAddress({}, 'https://builder.devtool.example'), undefined);
});

test('malformed addresses are one-line errors naming their source', () => {
  for (const [value, why] of [
    ['localhost', 'no port'],
    ['tcp://localhost', 'no port'],
    ['http://localhost:1234', 'unsupported scheme http'],
    ['docker-container://buildx', 'unsupported scheme docker-container'],
    ['host:99999', 'not an address'],
    ['tcp://host:1234/path', 'unexpected text after the port'],
    ['unix://', 'no socket path'],
  ] as const) {
    assert.throws(
      () => buildkitAddress({ BUILDKIT_HOST: value }),
      (e: Error) => {
        assert.ok(e instanceof DevtoolError);
        assert.match(e.message, new RegExp(`^invalid BUILDKIT_HOST "${value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}": ${why}; expected HOST:PORT`));
        assert.doesNotMatch(e.message, /\n/);
        return true;
      },
    );
  }
  assert.throws(() => buildkitAddress({}, 'tcp://builder'), /^DevtoolError: invalid builder "tcp:\/\/builder" in the current context: no port/);
});

test('keepalive: nothing set leaves every default to the client (infinity, 20 s, false)', () => {
  assert.deepEqual(keepaliveSettings({}), {});
  assert.deepEqual(keepaliveSettings({ DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: '', DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS: ' ' }), {});
});

test('keepalive: values are read from the environment given', () => {
  assert.deepEqual(
    keepaliveSettings({
      DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: '5000',
      DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS: '3000',
      DEVTOOL_KEEPALIVE_CLIENT_PERMIT_WITHOUT_STREAM: 'TRUE',
    }),
    { timeMs: 5000, timeoutMs: 3000, permitWithoutStream: true },
  );
  assert.deepEqual(keepaliveSettings({ DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: '0', DEVTOOL_KEEPALIVE_CLIENT_PERMIT_WITHOUT_STREAM: '0' }), {
    timeMs: 0,
    permitWithoutStream: false,
  });
});

test('keepalive: a malformed value is an error naming the variable', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['DEVTOOL_KEEPALIVE_CLIENT_TIME_MS', '10s', /^invalid DEVTOOL_KEEPALIVE_CLIENT_TIME_MS "10s": expected a whole number of milliseconds$/],
    ['DEVTOOL_KEEPALIVE_CLIENT_TIME_MS', '-1', /DEVTOOL_KEEPALIVE_CLIENT_TIME_MS "-1"/],
    ['DEVTOOL_KEEPALIVE_CLIENT_TIME_MS', '1.5', /DEVTOOL_KEEPALIVE_CLIENT_TIME_MS "1.5"/],
    ['DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS', '0', /^invalid DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS "0": expected a whole number of milliseconds above 0$/],
    ['DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS', '99999999999999999999', /DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS/],
    ['DEVTOOL_KEEPALIVE_CLIENT_PERMIT_WITHOUT_STREAM', 'maybe', /^invalid DEVTOOL_KEEPALIVE_CLIENT_PERMIT_WITHOUT_STREAM "maybe": expected true or false$/],
  ];
  for (const [name, value, message] of cases) {
    assert.throws(
      () => keepaliveSettings({ [name]: value }),
      (e: Error) => e instanceof DevtoolError && message.test(e.message),
      `${name}=${value}`,
    );
    // The backend checks them when it is made, before anything is built.
    assert.throws(() => new BuildkitBackend({ address: 'tcp://127.0.0.1:1234', env: { [name]: value } }), DevtoolError);
  }
});

test('the backend names its daemon', () => {
  assert.equal(new BuildkitBackend({ address: 'tcp://127.0.0.1:1234', env: {} }).name, 'buildkit (tcp://127.0.0.1:1234)');
});
