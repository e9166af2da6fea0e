/**
 * Proof Key for Code Exchange (RFC 7636) for the browser login: the CLI keeps a random verifier
 * and sends only its SHA-256 challenge with the authorization request, so a code stolen on its way
 * to the loopback redirect is useless without the verifier. The service checks the pair with the
 * same pkceChallenge (base/hash.ts).
 */
import { randomBytes } from 'node:crypto';
import { pkceChallenge } from '../../base/hash.ts';

export interface PkcePair {
  readonly verifier: string;
  readonly challenge: string;
  readonly method: 'S256';
}

export function createPkcePair(): PkcePair {
  // 32 random bytes: a 43-character verifier, the RFC's minimum length and recommended entropy.
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: pkceChallenge(verifier), method: 'S256' };
}

/** An unguessable `state`, which binds the redirect to the request this process made. */
export function randomState(): string {
  return randomBytes(16).toString('base64url');
}
