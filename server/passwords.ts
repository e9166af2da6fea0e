/**
 * Passwords, hashed with scrypt (node:crypto): `scrypt$N$r$p$<salt>$<key>`, base64url. The
 * parameters are in the hash so that they can grow without breaking stored ones. A sign-in of an
 * unknown user still runs scrypt once, so the answer's timing does not tell which names exist.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 200;
const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** null when the password is acceptable, else why not (one line). */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `the password must have at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `the password must have at most ${PASSWORD_MAX} characters`;
  return null;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const DUMMY_SALT = randomBytes(16);

/** Whether `password` matches `stored`; with no stored hash, false after the same work. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parts = stored?.split('$');
  if (parts?.length !== 6 || parts[0] !== 'scrypt') {
    await derive(password, DUMMY_SALT, N, R, P);
    return false;
  }
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const expected = Buffer.from(parts[5]!, 'base64url');
  const key = await derive(password, Buffer.from(parts[4]!, 'base64url'), n, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}
