import assert from 'node:assert/strict';

import { test } from 'node:test';
import ssh2 from 'ssh2';
import { blobOfPublicKey, ed25519KeyPair } from './keys.ts';

test('generated ed25519 keys parse as OpenSSH keys and the halves belong together', () => {
  const pair = ed25519KeyPair('devtool');
  assert.match(pair.publicKey, /^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI[A-Za-z0-9+/=]+ devtool$/);
  const priv = ssh2.utils.parseKey(pair.privateKey);
  assert.ok(!(priv instanceof Error), String(priv));
  const pub = ssh2.utils.parseKey(pair.publicKey);
  assert.ok(!(pub instanceof Error));
  const k = Array.isArray(priv) ? priv[0]! : priv;
  const p = Array.isArray(pub) ? pub[0]! : pub;
  assert.equal(k.type, 'ssh-ed25519');
  assert.deepEqual(k.getPublicSSH(), blobOfPublicKey(pair.publicKey));
  const data = Buffer.from('hello');
  assert.ok(p.verify(data, k.sign(data)));
});

test('each call makes a new key', () => {
  assert.notEqual(ed25519KeyPair('a').publicKey.split(' ')[1], ed25519KeyPair('a').publicKey.split(' ')[1]);
});
