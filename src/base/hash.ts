/** Hashing helpers. Ground floor: imports nothing from src/. */
import { createHash } from 'node:crypto';

/** The SHA-256 of a text (UTF-8), in hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The S256 challenge of PKCE (RFC 7636): BASE64URL(SHA256(verifier)). The CLI sends it with a
 * browser login (service/login/pkce.ts); the service checks a redeemed code's verifier against it.
 */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
