/**
 * Browser sessions and CSRF protection of the service's pages.
 * - A session is a random token in an HttpOnly, SameSite=Lax cookie (Secure except over plain
 *   http on a loopback address, where browsers keep no Secure cookie); the store keeps only its
 *   SHA-256 (a `session` grant, so every replica knows it) and it ends `sessionTtlMs` after the
 *   sign-in (the chart's `service.sessionLength`), however much it is used.
 * - Secure cookies are named `__Host-...`: a browser accepts such a cookie only from this very host
 *   (no Domain, Path=/, Secure), so a sibling host (a user's endpoint under the same parent
 *   domain) cannot plant a session or CSRF cookie that the service would read as its own. Only the
 *   name of the current mode is read.
 * - Every form POST carries a CSRF token that a page on another site cannot read: a signed-in
 *   user's is kept with the session (synchronizer token); before sign-in, the sign-in and sign-up
 *   forms use a double-submit cookie. Both are compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sha256 } from '../src/base/hash.ts';
import { DEFAULT_SESSION_TTL_MS, type ServiceDeps } from './service-deps.ts';

export const SESSION_COOKIE = 'devtool_session';
/** The double-submit CSRF cookie of the pages shown before sign-in. */
export const PRE_CSRF_COOKIE = 'devtool_csrf';
const HOST_ONLY = '__Host-';

export interface BrowserSession {
  id: string;
  user: string;
  csrf: string;
  expiresAt: string;
}

export const randomSecret = () => randomBytes(32).toString('base64url');

export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|::1|localhost)$/;

/** Secure cookies everywhere but plain http to a loopback address (a service run on this machine). */
export function secureCookies(ctx: ServiceDeps, request: FastifyRequest): boolean {
  if (ctx.config.publicUrl?.startsWith('https:')) return true;
  return !(request.protocol === 'http' && LOOPBACK.test(request.hostname));
}

/** The cookie's name as sent: `__Host-<name>` whenever cookies are Secure. */
export function cookieName(ctx: ServiceDeps, request: FastifyRequest, name: string): string {
  return secureCookies(ctx, request) ? `${HOST_ONLY}${name}` : name;
}

function readCookie(ctx: ServiceDeps, request: FastifyRequest, name: string): string | undefined {
  return parseCookies(request.headers.cookie)[cookieName(ctx, request, name)];
}

export function setCookie(ctx: ServiceDeps, request: FastifyRequest, reply: FastifyReply, name: string, value: string, maxAgeSec: number): void {
  const attrs = [`${cookieName(ctx, request, name)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeSec}`];
  if (secureCookies(ctx, request)) attrs.push('Secure');
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous.map(String) : [String(previous)];
  reply.header('set-cookie', [...list, attrs.join('; ')]);
}

export async function startSession(ctx: ServiceDeps, request: FastifyRequest, reply: FastifyReply, user: string): Promise<BrowserSession> {
  const token = randomSecret();
  const hash = sha256(token);
  const ttl = ctx.config.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const session: BrowserSession = { id: hash.slice(0, 24), user, csrf: randomSecret(), expiresAt: new Date(ctx.now().getTime() + ttl).toISOString() };
  await ctx.store.putGrant({ kind: 'session', id: session.id, user, expiresAt: session.expiresAt, fields: { hash, csrf: session.csrf } });
  setCookie(ctx, request, reply, SESSION_COOKIE, token, Math.floor(ttl / 1000));
  return session;
}

/** The request's session, or undefined (none, unknown, ended, or its account removed or disabled). */
export async function currentSession(ctx: ServiceDeps, request: FastifyRequest): Promise<BrowserSession | undefined> {
  const token = readCookie(ctx, request, SESSION_COOKIE);
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const hash = sha256(token);
  const g = await ctx.store.getGrant('session', hash.slice(0, 24));
  if (!g?.user || !sameSecret(g.fields['hash'], hash)) return undefined;
  if (Date.parse(g.expiresAt) <= ctx.now().getTime()) {
    await ctx.store.deleteGrant('session', g.id);
    return undefined;
  }
  const user = await ctx.store.getUser(g.user);
  if (!user || user.disabled) return undefined;
  return { id: g.id, user: g.user, csrf: g.fields['csrf'] ?? '', expiresAt: g.expiresAt };
}

export async function endSession(ctx: ServiceDeps, request: FastifyRequest, reply: FastifyReply, session: BrowserSession | undefined): Promise<void> {
  if (session) await ctx.store.deleteGrant('session', session.id);
  setCookie(ctx, request, reply, SESSION_COOKIE, '', 0);
}

/** The pre-sign-in CSRF token: the cookie's, or a new one set now. */
export function preSignInCsrf(ctx: ServiceDeps, request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookie(ctx, request, PRE_CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const fresh = randomSecret();
  setCookie(ctx, request, reply, PRE_CSRF_COOKIE, fresh, 3600);
  return fresh;
}

/** Whether a form POST carries the CSRF token it must: the session's, or before sign-in the cookie's. */
export function csrfValid(ctx: ServiceDeps, request: FastifyRequest, session: BrowserSession | undefined, formToken: string | undefined): boolean {
  if (session) return sameSecret(session.csrf, formToken);
  return sameSecret(readCookie(ctx, request, PRE_CSRF_COOKIE), formToken);
}
