/**
 * Proof Key for Code Exchange (RFC 7636) for the browser login: the CLI keeps a random verifier
 * and sends only its SHA-256 challenge with the authorization request, so a code stolen on its way
 * to the loopback redirect is useless without the verifier. The service checks the pair with
 * pkceChallenge too.
 */
import { createHash, randomBytes } from 'node:crypto';

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

/** BASE64URL(SHA256(verifier)), the S256 method. */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** An unguessable `state`, which binds the redirect to the request this process made. */
export function randomState(): string {
  return randomBytes(16).toString('base64url');
}
