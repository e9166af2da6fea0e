/**
 * The front door's key (the chart's Secret, mounted in the front door and the service): a request
 * to the waking page carries it, set by Caddy, and without it the service believes nothing the
 * request says. Anyone can reach the service's address (a pod dialling its Service, a client of the
 * service URL), so the namespace and host headers alone would let them wake any namespace.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether `given` (the header as Node hands it over) is the key. Both sides are hashed first, so
 * the comparison takes the same time whatever the given value's length and content. No key
 * configured: nothing matches.
 */
export function isFrontDoorKey(key: string | undefined, given: string | string[] | undefined): boolean {
  if (!key || typeof given !== 'string' || given.length === 0) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(key), digest(given));
}
