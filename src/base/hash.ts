/** Hashing helpers. Ground floor: imports nothing from src/. */
import { createHash } from 'node:crypto';

/** The SHA-256 of a text (UTF-8), in hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
