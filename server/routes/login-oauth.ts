/**
 * Login of the CLI (docs/decisions/0095-browser-login-pkce-loopback.md):
 * - browser: GET /auth/authorize (loopback redirect_uri only, PKCE S256 required) -> sign in if
 *   needed -> consent -> redirect with a code, single-use and valid 60 s, kept in the store so any
 *   replica redeems it at POST /auth/token with the verifier;
 * - device (RFC 8628): POST /auth/device/code gives a user code; a signed-in user types it on
 *   /device and approves; the CLI polls /auth/token meanwhile.
 * Either ends with a normal API token named after the machine, listed and revocable.
 */
import { randomInt } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pkceChallenge, sha256 } from '../../src/base/hash.ts';
import { CLI_CLIENT_ID, DEVICE_GRANT_TYPE, ErrorBody, OAuthError, routes, type TokenGrantAnswerBody, type TokenGrantRequestBody } from '../../api/routes.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { html, page } from '../pages/html.ts';
import { csrfValid, randomSecret, sameSecret } from '../browser-sessions.ts';
import { ApiError } from '../errors.ts';
import { ConflictError } from '../store/store.ts';
import { newToken } from '../tokens.ts';
import { type Form, formOf, RATE_LIMITED, refuseCsrf, requireSession, sendPage } from './login-pages.ts';

const CODE_TTL_MS = 60_000;
const DEVICE_TTL_MS = 600_000;
const DEVICE_INTERVAL_SEC = 5;
const DEFAULT_PENDING_DEVICE_CODES = { total: 100, perClient: 5 };
/** No vowels: a code never spells a word; 20^8 codes. */
const USER_CODE_LETTERS = 'BCDFGHJKLMNPQRSTVWXZ';
const LOOPBACK_REDIRECT = /^http:\/\/(127\.0\.0\.1|localhost):(\d{1,5})\/callback$/;

class OAuthRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface AuthorizeRequest {
  redirectUri: string;
  state: string;
  challenge: string;
  machine: string;
}

/** The request's parameters, or why not: `redirect` false when the answer must not go to redirect_uri. */
function authorizeRequest(q: Form): AuthorizeRequest | { error: string; redirect: boolean } {
  const redirectUri = q['redirect_uri'] ?? '';
  if (q['client_id'] !== CLI_CLIENT_ID) return { error: `unknown client_id "${q['client_id'] ?? ''}": only ${CLI_CLIENT_ID} logs in here`, redirect: false };
  if (!LOOPBACK_REDIRECT.test(redirectUri))
    return {
      error: 'redirect_uri must be http://127.0.0.1:<port>/callback or http://localhost:<port>/callback (the devtool CLI on this machine)',
      redirect: false,
    };
  const state = q['state'] ?? '';
  if (!state || state.length > 500) return { error: 'state is missing', redirect: false };
  if (q['response_type'] !== 'code') return { error: 'response_type must be code', redirect: true };
  if (q['code_challenge_method'] !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q['code_challenge'] ?? ''))
    return { error: 'PKCE is required: code_challenge (S256, 43 characters) and code_challenge_method=S256', redirect: true };
  const machine = (q['machine'] ?? '').slice(0, 64) || 'an unnamed machine';
  return { redirectUri, state, challenge: q['code_challenge']!, machine };
}

const withQuery = (uri: string, params: Record<string, string>) => `${uri}?${new URLSearchParams(params).toString()}`;

function badRequestPage(reply: FastifyReply, error: string): FastifyReply {
  return sendPage(reply, 400, page({ title: 'Sign-in request refused', error, body: html`<p>Start the login again from the terminal.</p>` }));
}

export function registerLoginOAuth(app: App, ctx: ServiceDeps): void {
  const base = (request: FastifyRequest) => ctx.config.publicUrl ?? `${request.protocol}://${request.host}`;

  app.get('/auth/authorize', async (request, reply) => {
    const a = authorizeRequest(request.query as Form);
    if ('error' in a) {
      if (!a.redirect) return badRequestPage(reply, a.error);
      const q = request.query as Form;
      return reply.redirect(withQuery(q['redirect_uri']!, { error: 'invalid_request', error_description: a.error, state: q['state']! }), 303);
    }
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    const hidden = Object.entries(request.query as Form)
      .filter(([k]) => ['client_id', 'redirect_uri', 'state', 'response_type', 'code_challenge', 'code_challenge_method', 'machine'].includes(k))
      .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v ?? ''}">`);
    return sendPage(
      reply,
      200,
      page({
        title: 'Allow the devtool CLI?',
        user: s.user,
        admin: s.admin,
        csrf: s.csrf,
        body: html`<p>The devtool CLI on <b>${a.machine}</b> asks to use your account <b>${s.user}</b>. It gets an API token named
"devtool CLI on ${a.machine}", which you can revoke on the <a href="/account/tokens">tokens page</a>.</p>
<p>Allow only if you just ran <code>devtool context use</code> yourself.</p>
<form method="post" action="/auth/authorize" id="consent"><input type="hidden" name="csrf" value="${s.csrf}">${hidden}
<button name="decision" value="allow" id="allow">Allow</button> <button name="decision" value="deny" id="deny">Deny</button></form>`,
      }),
    );
  });

  app.post('/auth/authorize', async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    const f = formOf(request);
    if (!csrfValid(ctx, request, s, f['csrf'])) return refuseCsrf(reply);
    const a = authorizeRequest(f);
    if ('error' in a) return badRequestPage(reply, a.error);
    if (f['decision'] !== 'allow') {
      return reply.redirect(withQuery(a.redirectUri, { error: 'access_denied', error_description: `${s.user} denied the login`, state: a.state }), 303);
    }
    const code = randomSecret();
    const hash = sha256(code);
    await ctx.store.putGrant({
      kind: 'code',
      id: hash.slice(0, 24),
      user: s.user,
      expiresAt: new Date(ctx.now().getTime() + CODE_TTL_MS).toISOString(),
      fields: { hash, challenge: a.challenge, redirectUri: a.redirectUri, machine: a.machine },
    });
    return reply.redirect(withQuery(a.redirectUri, { code, state: a.state }), 303);
  });

  app.get('/auth/done', async (request, reply) => {
    const refused = (request.query as Form)['outcome'] === 'refused';
    return sendPage(
      reply,
      200,
      page({
        title: refused ? 'Sign-in refused' : 'Signed in',
        body: refused
          ? html`<p>The CLI was not signed in. You can close this tab.</p>`
          : html`<p id="signed-in">The devtool CLI is signed in. You can close this tab and go back to the terminal.</p>`,
      }),
    );
  });

  registerDeviceRoutes(app, ctx, base);

  const r = routes.tokenGrant;
  app.post(
    r.url,
    {
      ...RATE_LIMITED,
      schema: { body: r.body, summary: r.summary, response: { 200: r.response, 400: OAuthError, '4xx': ErrorBody } },
      // An unknown grant type is refused as RFC 6749 5.2 says, before the schema's own line.
      preValidation: async (request, reply) => {
        const grantType = (request.body as { grant_type?: unknown } | undefined)?.grant_type;
        if (typeof grantType === 'string' && grantType !== 'authorization_code' && grantType !== DEVICE_GRANT_TYPE) {
          const refusal = unsupportedGrantType();
          return reply.code(400).send({ error: refusal.code, error_description: refusal.message });
        }
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        return await grant(ctx, request.body as TokenGrantRequestBody);
      } catch (err) {
        if (err instanceof OAuthRefusal) return reply.code(400).send({ error: err.code, error_description: err.message });
        throw err;
      }
    },
  );
}

async function issue(ctx: ServiceDeps, user: string | undefined, machine: string | undefined): Promise<TokenGrantAnswerBody> {
  const account = user ? await ctx.store.getUser(user) : undefined;
  if (!user || !account) throw new OAuthRefusal('invalid_grant', 'the account of this login no longer exists');
  if (account.disabled) throw new OAuthRefusal('invalid_grant', `the account ${user} is disabled`);
  const { token, record } = newToken(user, `devtool CLI on ${machine || 'an unnamed machine'}`, ctx.now());
  await ctx.store.addToken(record);
  return { access_token: token, token_type: 'Bearer', user };
}

async function grant(ctx: ServiceDeps, b: TokenGrantRequestBody): Promise<TokenGrantAnswerBody> {
  if (b.grant_type === 'authorization_code') {
    const code = b.code ?? '';
    const hash = sha256(code);
    const g = await ctx.store.getGrant('code', hash.slice(0, 24));
    // Deleted before any check: a code is burned by its first use, right or wrong (RFC 6749 4.1.2).
    if (!g || !sameSecret(g.fields['hash'], hash) || !(await ctx.store.deleteGrant('code', g.id))) {
      throw new OAuthRefusal('invalid_grant', 'unknown or already used authorization code: run the login again');
    }
    if (Date.parse(g.expiresAt) <= ctx.now().getTime()) throw new OAuthRefusal('invalid_grant', 'the authorization code expired (60 s): run the login again');
    if (b.redirect_uri !== g.fields['redirectUri']) throw new OAuthRefusal('invalid_grant', 'redirect_uri differs from the one of the authorization request');
    if (!b.code_verifier || !sameSecret(pkceChallenge(b.code_verifier), g.fields['challenge'])) {
      throw new OAuthRefusal('invalid_grant', 'code_verifier does not match the code_challenge (PKCE)');
    }
    return issue(ctx, g.user, g.fields['machine']);
  }
  if (b.grant_type === DEVICE_GRANT_TYPE) return deviceGrant(ctx, b.device_code ?? '');
  throw unsupportedGrantType();
}

const unsupportedGrantType = () => new OAuthRefusal('unsupported_grant_type', `grant_type must be authorization_code or ${DEVICE_GRANT_TYPE}`);

async function deviceGrant(ctx: ServiceDeps, deviceCode: string): Promise<TokenGrantAnswerBody> {
  const [id = '', secret = ''] = deviceCode.split('.');
  const g = /^[A-Z]{8}$/.test(id) ? await ctx.store.getGrant('device', id) : undefined;
  if (!g || !sameSecret(g.fields['hash'], sha256(secret))) throw new OAuthRefusal('invalid_grant', 'unknown device code: run the login again');
  const now = ctx.now().getTime();
  if (Date.parse(g.expiresAt) <= now) {
    await ctx.store.deleteGrant('device', id);
    throw new OAuthRefusal('expired_token', 'the device code expired: run the login again');
  }
  const status = g.fields['status'];
  if (status === 'denied') {
    await ctx.store.deleteGrant('device', id);
    throw new OAuthRefusal('access_denied', 'the login was denied on the device page');
  }
  if (status === 'approved') {
    if (!(await ctx.store.deleteGrant('device', id))) throw new OAuthRefusal('invalid_grant', 'this device code was already used');
    return issue(ctx, g.user, g.fields['machine']);
  }
  const last = Number(g.fields['lastPoll'] ?? 0);
  await ctx.store.updateGrant('device', id, { lastPoll: String(now) });
  if (now - last < DEVICE_INTERVAL_SEC * 1000) throw new OAuthRefusal('slow_down', `poll at most every ${DEVICE_INTERVAL_SEC} s`);
  throw new OAuthRefusal('authorization_pending', 'waiting for the user to enter the code');
}

/** XXXX-XXXX typed any way (lower case, no dash, spaces) -> XXXXXXXX, or undefined. */
export function normalizeUserCode(text: string): string | undefined {
  const letters = text.toUpperCase().replace(/[\s-]/g, '');
  return /^[A-Z]{8}$/.test(letters) ? letters : undefined;
}

function registerDeviceRoutes(app: App, ctx: ServiceDeps, base: (request: FastifyRequest) => string): void {
  const r = routes.deviceCode;
  app.post(
    r.url,
    { ...RATE_LIMITED, schema: { body: r.body, summary: r.summary, response: { 200: r.response, '4xx': ErrorBody } } },
    async (request, reply) => {
      const body = request.body as { machine?: string };
      // Anyone may ask without signing in, and each code is a Secret until it expires: bounded.
      const limits = ctx.config.pendingDeviceCodes ?? DEFAULT_PENDING_DEVICE_CODES;
      const pending = await ctx.store.listLiveGrants('device', ctx.now());
      const waitMin = Math.ceil(DEVICE_TTL_MS / 60_000);
      if (pending.filter((g) => g.fields['client'] === request.ip).length >= limits.perClient) {
        throw new ApiError(429, `too many device codes from this address wait for approval (${limits.perClient}): use one, or try again in ${waitMin} minutes`);
      }
      if (pending.length >= limits.total) throw new ApiError(429, `too many device codes wait for approval: try again in ${waitMin} minutes`);
      const secret = randomSecret();
      for (let attempt = 0; ; attempt++) {
        const id = Array.from({ length: 8 }, () => USER_CODE_LETTERS[randomInt(USER_CODE_LETTERS.length)]).join('');
        try {
          await ctx.store.putGrant({
            kind: 'device',
            id,
            expiresAt: new Date(ctx.now().getTime() + DEVICE_TTL_MS).toISOString(),
            fields: { hash: sha256(secret), status: 'pending', machine: body.machine || 'an unnamed machine', lastPoll: '0', client: request.ip },
          });
        } catch (err) {
          if (err instanceof ConflictError && attempt < 3) continue;
          throw err;
        }
        const userCode = `${id.slice(0, 4)}-${id.slice(4)}`;
        reply.header('cache-control', 'no-store');
        return {
          device_code: `${id}.${secret}`,
          user_code: userCode,
          verification_uri: `${base(request)}/device`,
          verification_uri_complete: `${base(request)}/device?code=${userCode}`,
          expires_in: DEVICE_TTL_MS / 1000,
          interval: DEVICE_INTERVAL_SEC,
        };
      }
    },
  );

  app.get('/device', async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    const code = ((request.query as Form)['code'] ?? '').slice(0, 20);
    return sendPage(
      reply,
      200,
      page({
        title: 'Sign in a device',
        user: s.user,
        admin: s.admin,
        csrf: s.csrf,
        current: 'device',
        body: html`<p>Enter the code the devtool CLI printed. The device gets an API token of your account <b>${s.user}</b>.</p>
<form method="post" action="/device" id="device"><input type="hidden" name="csrf" value="${s.csrf}">
<label>Code <input type="text" name="code" required value="${code}" autocomplete="off"></label>
<button name="decision" value="allow" id="allow">Allow</button> <button name="decision" value="deny" id="deny">Deny</button></form>`,
      }),
    );
  });

  app.post('/device', RATE_LIMITED, async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    const f = formOf(request);
    if (!csrfValid(ctx, request, s, f['csrf'])) return refuseCsrf(reply);
    const id = normalizeUserCode(f['code'] ?? '');
    const g = id ? await ctx.store.getGrant('device', id) : undefined;
    const back = html`<p><a href="/device">Enter another code</a></p>`;
    if (!g || Date.parse(g.expiresAt) <= ctx.now().getTime()) {
      return sendPage(
        reply,
        400,
        page({
          title: 'Unknown code',
          user: s.user,
          admin: s.admin,
          csrf: s.csrf,
          error: 'This code is unknown or expired: check it, or run the login again for a new one.',
          body: back,
        }),
      );
    }
    if (g.fields['status'] !== 'pending') {
      return sendPage(
        reply,
        409,
        page({ title: 'Code already used', user: s.user, admin: s.admin, csrf: s.csrf, error: 'This code was already approved or denied.', body: back }),
      );
    }
    const allow = f['decision'] === 'allow';
    await ctx.store.updateGrant('device', g.id, { status: allow ? 'approved' : 'denied' }, s.user);
    return sendPage(
      reply,
      200,
      page({
        title: allow ? 'Device signed in' : 'Device refused',
        user: s.user,
        admin: s.admin,
        csrf: s.csrf,
        body: allow
          ? html`<p id="signed-in">The devtool CLI on ${g.fields['machine'] ?? 'the device'} is signed in. Go back to the terminal.</p>`
          : html`<p>The device was not signed in.</p>`,
      }),
    );
  });
}
