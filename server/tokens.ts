/**
 * API tokens: `dvt_` and 43 characters of base64url (32 random bytes). The prefix lets secret
 * scanners and our log redaction recognize one; only the SHA-256 is stored, so a leaked store (or
 * a `kubectl get secret`) gives nothing that authenticates.
 */
import { randomBytes } from 'node:crypto';
import { sha256 } from '../src/base/hash.ts';
import type { Store, TokenRecord } from './store/store.ts';

export const TOKEN_PREFIX = 'dvt_';
const TOKEN_SHAPE = /^dvt_[A-Za-z0-9_-]{43}$/;

export function hashToken(token: string): string {
  return sha256(token);
}

export function newToken(user: string, name: string, now: Date, expiresInDays?: number): { token: string; record: TokenRecord } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const hash = hashToken(token);
  const record: TokenRecord = { id: hash.slice(0, 24), hash, user, name, createdAt: now.toISOString() };
  if (expiresInDays !== undefined) record.expiresAt = new Date(now.getTime() + expiresInDays * 86_400_000).toISOString();
  return { token, record };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none of our shape. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m && TOKEN_SHAPE.test(m[1]!) ? m[1] : undefined;
}

export function isExpired(record: TokenRecord, now: Date): boolean {
  return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now.getTime();
}

/**
 * The user's tokens that still authenticate, for the lists (the API's and the tokens page): an
 * expired one (a pipeline run's whose end nobody recorded, one made with an expiry) is deleted
 * as it is found and left out.
 */
export async function liveTokens(store: Pick<Store, 'listTokens' | 'deleteToken'>, user: string, now: Date): Promise<TokenRecord[]> {
  const all = await store.listTokens(user);
  const expired = all.filter((t) => isExpired(t, now));
  await Promise.all(expired.map((t) => store.deleteToken(user, t.id).catch(() => false)));
  return all.filter((t) => !isExpired(t, now));
}
