import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnavailableError } from '../base/errors.ts';
import { dockerEndpoint } from './docker-engine.ts';
import { DockerCredentials } from './docker-config.ts';
import { chooseBuilder, openBackend } from './select.ts';
import { parseChallenge } from './registry.ts';

const cluster = { name: 'kind-dev', isDevtool: false };
const service = { name: 'https://devtool.example.com', isDevtool: true, builder: 'tcp://buildkit.devtool.example.com:1234' };

test('builder: BUILDKIT_HOST, else the service, else a tcp:// context builder, else Docker', () => {
  assert.deepEqual(chooseBuilder(cluster, {}), { kind: 'docker' });
  assert.deepEqual(chooseBuilder({ ...cluster, builder: 'docker' }, {}), { kind: 'docker' });
  assert.deepEqual(chooseBuilder({ ...cluster, builder: 'tcp://10.0.0.5:1234' }, {}), { kind: 'buildkit', address: 'tcp://10.0.0.5:1234' });
  assert.deepEqual(chooseBuilder(cluster, { BUILDKIT_HOST: 'buildkitd:1234' }), { kind: 'buildkit', address: 'tcp://buildkitd:1234' });
  assert.deepEqual(chooseBuilder(service, {}), { kind: 'service', url: 'https://devtool.example.com', context: service });
  assert.deepEqual(
    chooseBuilder(service, { BUILDKIT_HOST: 'buildkitd:1234' }),
    { kind: 'buildkit', address: 'tcp://buildkitd:1234' },
    "BUILDKIT_HOST wins, and the service's builder is not used",
  );
});

test('a service context without a token cannot build: exit code 3 and how to log in', async () => {
  await assert.rejects(
    openBackend({ kind: 'service', url: service.name, context: service }, {}, new DockerCredentials({})),
    (e: unknown) =>
      e instanceof UnavailableError &&
      e.exitCode === 3 &&
      /needs a logged-in user: log in with 'devtool context use https:\/\/devtool\.example\.com --token/.test(e.message),
  );
});

test('a malformed keepalive variable is refused before the service is asked', async () => {
  await assert.rejects(
    openBackend(
      { kind: 'service', url: service.name, context: { ...service, token: 'dvt_x' } },
      { DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: 'soon' },
      new DockerCredentials({}),
    ),
    /invalid DEVTOOL_KEEPALIVE_CLIENT_TIME_MS "soon"/,
  );
});

test('DOCKER_HOST: unix sockets, tcp (TLS on 2376 or DOCKER_TLS_VERIFY), ssh; default /var/run/docker.sock', () => {
  assert.equal(dockerEndpoint({}).display, 'unix:///var/run/docker.sock');
  assert.equal(dockerEndpoint({}).options.socketPath, '/var/run/docker.sock');
  const unix = dockerEndpoint({ DOCKER_HOST: 'unix:///nonexistent' });
  assert.equal(unix.options.socketPath, '/nonexistent');
  assert.equal(unix.options.host, undefined, 'nothing of a tcp DOCKER_HOST of the test process leaks in');
  const tcp = dockerEndpoint({ DOCKER_HOST: 'tcp://10.0.0.2:2375' });
  assert.deepEqual([tcp.options.protocol, tcp.options.host, tcp.options.port, tcp.options.socketPath], ['http', '10.0.0.2', '2375', undefined]);
  assert.equal(dockerEndpoint({ DOCKER_HOST: 'tcp://10.0.0.2:2376' }).options.protocol, 'https');
  assert.throws(
    () => dockerEndpoint({ DOCKER_HOST: 'tcp://10.0.0.2:2376', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/nonexistent' }),
    /ca\.pem cannot be read \(set DOCKER_CERT_PATH\)/,
  );
  const ssh = dockerEndpoint({ DOCKER_HOST: 'ssh://me@build.example' });
  assert.deepEqual([ssh.options.protocol, ssh.options.host, ssh.options.username], ['ssh', 'build.example', 'me']);
  assert.throws(() => dockerEndpoint({ DOCKER_HOST: 'npipe:////./pipe/docker' }), /npipe is not supported/);
});

test("DOCKER_HOST on Windows: Docker Desktop's named pipe by default, npipe:// addresses", () => {
  const none = dockerEndpoint({}, 'win32');
  assert.deepEqual([none.display, none.options.socketPath], ['npipe:////./pipe/docker_engine', '//./pipe/docker_engine']);
  const pipe = dockerEndpoint({ DOCKER_HOST: 'npipe:////./pipe/dockerDesktopLinuxEngine' }, 'win32');
  assert.equal(pipe.options.socketPath, '//./pipe/dockerDesktopLinuxEngine');
  assert.equal(dockerEndpoint({}, 'darwin').options.socketPath, '/var/run/docker.sock');
  assert.throws(() => dockerEndpoint({ DOCKER_HOST: 'fd://' }, 'win32'), /fd is not supported \(unix, tcp or ssh, npipe\)/);
});

test('registry challenges are parsed as RFC 7235 parameters', () => {
  assert.deepEqual(parseChallenge(' realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/x:pull"'), {
    realm: 'https://auth.docker.io/token',
    service: 'registry.docker.io',
    scope: 'repository:library/x:pull',
  });
  assert.deepEqual(parseChallenge(' realm=https://a/token, service="a\\"b"'), { realm: 'https://a/token', service: 'a"b' });
});
