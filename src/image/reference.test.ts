import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatReference, isLoopbackRegistry, parseReference, registryApiHost, repositoryComponent } from './reference.ts';

test('references are read as Docker reads them', () => {
  assert.deepEqual(parseReference('localhost:5000/team/api:dev'), { registry: 'localhost:5000', repository: 'team/api', tag: 'dev' });
  assert.deepEqual(parseReference('nginx'), { registry: 'docker.io', repository: 'library/nginx' });
  assert.deepEqual(parseReference('acme/api:1.2'), { registry: 'docker.io', repository: 'acme/api', tag: '1.2' });
  assert.deepEqual(parseReference('ghcr.io/acme/api'), { registry: 'ghcr.io', repository: 'acme/api' });
  assert.deepEqual(parseReference('localhost/api'), { registry: 'localhost', repository: 'api' });
  const digest = `sha256:${'a'.repeat(64)}`;
  assert.deepEqual(parseReference(`reg.io:443/x@${digest}`), { registry: 'reg.io:443', repository: 'x', digest });
});

test('bad references name the field', () => {
  assert.throws(() => parseReference('Localhost:5000/API:dev', 'build.api.image'), /build\.api\.image: invalid image reference.*lower-case/);
  assert.throws(() => parseReference('reg.io/api:-bad'), /a tag is/);
  assert.throws(() => parseReference('reg.io/api@md5:x'), /digest/);
});

test('references are written back in full, and names become valid repository components', () => {
  assert.equal(formatReference({ registry: 'localhost:5000', repository: 'shop-api', tag: 'devtool-abc' }), 'localhost:5000/shop-api:devtool-abc');
  assert.equal(repositoryComponent('Shop_Front.API'), 'shop_front.api');
  assert.equal(repositoryComponent('my app--x'), 'my-app-x');
  assert.equal(repositoryComponent('--'), 'image');
});

test('loopback registries are plain HTTP; Docker Hub has its own API host', () => {
  assert.ok(isLoopbackRegistry('localhost:5000'));
  assert.ok(isLoopbackRegistry('127.0.0.1:5000'));
  assert.ok(isLoopbackRegistry('[::1]:5000'));
  assert.ok(!isLoopbackRegistry('registry.local:5000'));
  assert.equal(registryApiHost('docker.io'), 'registry-1.docker.io');
  assert.equal(registryApiHost('ghcr.io'), 'ghcr.io');
});
