import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeAuth, DockerCredentials, findAuth, registryAuthHeader } from './docker-config.ts';

test('auths entries: base64 user:password, username/password, identity tokens', () => {
  assert.deepEqual(decodeAuth({ auth: Buffer.from('me:p:w').toString('base64') }), { username: 'me', password: 'p:w' });
  assert.deepEqual(decodeAuth({ username: 'me', password: 'pw' }), { username: 'me', password: 'pw' });
  assert.deepEqual(decodeAuth({ identitytoken: 'tok' }), { identityToken: 'tok' });
  assert.equal(decodeAuth({}), undefined);
});

test('auths keys may be hosts or URLs; Docker Hub is stored under index.docker.io', () => {
  const auths = { 'https://index.docker.io/v1/': { auth: 'aHViOng=' }, 'ghcr.io': { auth: 'Z2g6eA==' }, 'https://reg.example:5000': { auth: 'cjp4' } };
  assert.equal(findAuth(auths, 'docker.io'), auths['https://index.docker.io/v1/']);
  assert.equal(findAuth(auths, 'ghcr.io'), auths['ghcr.io']);
  assert.equal(findAuth(auths, 'reg.example:5000'), auths['https://reg.example:5000']);
  assert.equal(findAuth(auths, 'localhost:5000'), undefined);
});

test('credentials come from $DOCKER_CONFIG/config.json; no file means anonymous', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'docker-config-'));
  mkdirSync(join(dir, 'cfg'));
  writeFileSync(join(dir, 'cfg', 'config.json'), JSON.stringify({ auths: { 'ghcr.io': { auth: Buffer.from('me:pw').toString('base64') } } }));
  const creds = DockerCredentials.load({ DOCKER_CONFIG: join(dir, 'cfg') });
  assert.deepEqual(await creds.forRegistry('ghcr.io'), { username: 'me', password: 'pw' });
  assert.equal(await creds.forRegistry('localhost:5000'), undefined);
  assert.equal(await DockerCredentials.load({ HOME: join(dir, 'nowhere') }).forRegistry('ghcr.io'), undefined);
  // A credential helper that is not installed falls back to the auths entry.
  writeFileSync(
    join(dir, 'cfg', 'config.json'),
    JSON.stringify({ credsStore: 'devtool-test-absent', auths: { 'ghcr.io': { auth: Buffer.from('me:pw').toString('base64') } } }),
  );
  assert.deepEqual(await DockerCredentials.load({ DOCKER_CONFIG: join(dir, 'cfg'), PATH: '/nonexistent' }).forRegistry('ghcr.io'), {
    username: 'me',
    password: 'pw',
  });
});

test('X-Registry-Auth: {} for anonymous access, else the credentials with the server address', () => {
  assert.deepEqual(registryAuthHeader('localhost:5000', undefined), {});
  assert.deepEqual(registryAuthHeader('docker.io', { username: 'me', password: 'pw' }), {
    username: 'me',
    password: 'pw',
    serveraddress: 'https://index.docker.io/v1/',
  });
  assert.deepEqual(registryAuthHeader('ghcr.io', { identityToken: 't' }), { identitytoken: 't', serveraddress: 'ghcr.io' });
});
