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
  assert.deepEqual(chooseBuilder(service, {}), { kind: 'service', url: 'https://devtool.example.com' });
  assert.deepEqual(
    chooseBuilder(service, { BUILDKIT_HOST: 'buildkitd:1234' }),
    { kind: 'buildkit', address: 'tcp://buildkitd:1234' },
    "BUILDKIT_HOST wins, and the service's builder is not used",
  );
});

test('a service context cannot build here: exit code 3 and what to do instead', async () => {
  await assert.rejects(
    openBackend({ kind: 'service', url: service.name }, {}, new DockerCredentials({})),
    (e: unknown) => e instanceof UnavailableError && e.exitCode === 3 && /BUILDKIT_HOST/.test(e.message),
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

test('registry challenges are parsed as RFC 7235 parameters', () => {
  assert.deepEqual(parseChallenge(' realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/x:pull"'), {
    realm: 'https://auth.docker.io/token',
    service: 'registry.docker.io',
    scope: 'repository:library/x:pull',
  });
  assert.deepEqual(parseChallenge(' realm=https://a/token, service="a\\"b"'), { realm: 'https://a/token', service: 'a"b' });
});
