import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pkceChallenge } from '../../base/hash.ts';
import { createPkcePair, randomState } from './pkce.ts';

test('the S256 challenge of RFC 7636, appendix B', () => {
  assert.equal(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
});

test('a pair is a fresh 43-character verifier and its challenge; states differ', () => {
  const a = createPkcePair();
  const b = createPkcePair();
  assert.match(a.verifier, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a.verifier, b.verifier);
  assert.equal(a.challenge, pkceChallenge(a.verifier));
  assert.notEqual(randomState(), randomState());
});
