/**
 * The service's own pages: sign in, sign up (first sign-in makes the account and its namespace,
 * as the operator's create-user does, subject to the sign-up policy), sign out, personal access
 * tokens (list, create — shown once —, revoke) and stored secrets (names only; set, delete).
 * Every form POST is checked for its CSRF token first; sign-in and sign-up are rate-limited per
 * client, and sign-in also per account (login-throttle.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DNS_LABEL_PATTERN } from '../../api/dns-label.ts';
import { SECRET_NAME_PATTERN, SECRET_NAME_RULE, SECRET_VALUE_MAX, SECRETS_TOTAL_MAX } from '../../api/routes.ts';
import { createAccountWithPassword } from '../accounts.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import { html, PAGE_HEADERS, page } from '../pages/html.ts';
import { AccountLoginThrottle } from '../login-throttle.ts';
import { hashPassword, PASSWORD_MIN, passwordProblem, verifyPassword } from '../passwords.ts';
import { csrfValid, currentSession, endSession, preSignInCsrf, type BrowserSession, startSession } from '../browser-sessions.ts';
import { liveTokens, newToken } from '../tokens.ts';

export type Form = Record<string, string | undefined>;
export const formOf = (request: FastifyRequest): Form => (request.body ?? {}) as Form;
export const RATE_LIMITED = { config: { rateLimit: {} } };
const DEFAULT_ACCOUNT_LOGIN_LIMIT = { max: 10, timeWindowMs: 15 * 60_000 };

export function sendPage(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(text);
}

/** Only a path on this service: never another site (an open redirect). */
export function safeNext(next: string | undefined): string {
  // Printable ASCII only: browsers drop tabs and newlines from a URL, so "/\t/evil.example" would become "//evil.example".
  return next && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/';
}

/** A signed-in browser: its session, and whether its user is an admin (the navigation lists Admin on every page for an admin). */
export interface SignedInSession extends BrowserSession {
  admin: boolean;
}

/** The signed-in user's session, or undefined after sending the browser to sign in. */
export async function requireSession(ctx: ServiceDeps, request: FastifyRequest, reply: FastifyReply): Promise<SignedInSession | undefined> {
  const session = await currentSession(ctx, request);
  if (!session) {
    if (request.method === 'GET') reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
    else sendPage(reply, 401, page({ title: 'Signed out', error: 'Your session ended: sign in again.', body: html`<p><a href="/login">Sign in</a></p>` }));
    return undefined;
  }
  return { ...session, admin: (await ctx.store.getUser(session.user))?.admin === true };
}

/** A form POST whose CSRF token is wrong gets a page saying so, and nothing is done. */
export function refuseCsrf(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    403,
    page({ title: 'Form expired', error: 'This form is not valid any more (CSRF check failed): go back, reload the page and try again.', body: html`` }),
  );
}

function signupAllowed(ctx: ServiceDeps, name: string): boolean {
  const s = ctx.config.signup;
  return !s || s.mode === 'open' || s.allow.includes(name);
}

function loginPage(ctx: ServiceDeps, csrf: string, o: { next?: string; name?: string; error?: string }): string {
  const next = safeNext(o.next);
  const signupOffered = !ctx.config.signup || ctx.config.signup.mode === 'open' || ctx.config.signup.allow.length > 0;
  return page({
    title: 'Sign in to devtool',
    ...(o.error ? { error: o.error } : {}),
    body: html`<form method="post" action="/login" id="signin">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="next" value="${next}">
<label>User name <input type="text" name="name" autocomplete="username" required value="${o.name ?? ''}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button>Sign in</button></form>
${
  signupOffered
    ? html`<h2>New here? Create your account</h2>
<form method="post" action="/signup" id="signup">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="next" value="${next}">
<label>User name <input type="text" name="name" autocomplete="username" required pattern="${DNS_LABEL_PATTERN.slice(1, -1)}"></label>
<label>Password (at least ${PASSWORD_MIN} characters) <input type="password" name="password" autocomplete="new-password" required></label>
<label>Password again <input type="password" name="password2" autocomplete="new-password" required></label>
<button>Create account</button></form>`
    : html`<p>Accounts are made by the operator of this service.</p>`
}`,
  });
}

export function registerLoginPages(app: App, ctx: ServiceDeps): void {
  app.get('/login', async (request, reply) => {
    const next = (request.query as Form)['next'];
    if (await currentSession(ctx, request)) return reply.redirect(safeNext(next), 303);
    return sendPage(reply, 200, loginPage(ctx, preSignInCsrf(ctx, request, reply), next ? { next } : {}));
  });

  const throttle = new AccountLoginThrottle(ctx.config.accountLoginLimit ?? DEFAULT_ACCOUNT_LOGIN_LIMIT, ctx.now);
  app.post('/login', RATE_LIMITED, async (request, reply) => {
    const f = formOf(request);
    if (!csrfValid(ctx, request, undefined, f['csrf'])) return refuseCsrf(reply);
    const name = f['name'] ?? '';
    const next = f['next'] ? { next: f['next'] } : {};
    const wait = throttle.retryAfterSec(name);
    if (wait > 0) {
      const error = `Too many wrong passwords for this account: try again in ${wait} s.`;
      return sendPage(reply.header('retry-after', String(wait)), 429, loginPage(ctx, preSignInCsrf(ctx, request, reply), { name, error, ...next }));
    }
    const user = await ctx.store.getUser(name);
    const ok = await verifyPassword(f['password'] ?? '', user ? await ctx.store.getPasswordHash(name) : undefined);
    if (!user || !ok) {
      throttle.failed(name);
      return sendPage(reply, 401, loginPage(ctx, preSignInCsrf(ctx, request, reply), { name, error: 'Wrong user name or password.', ...next }));
    }
    throttle.succeeded(name);
    if (user.disabled) {
      return sendPage(
        reply,
        403,
        loginPage(ctx, preSignInCsrf(ctx, request, reply), { name, error: 'This account is disabled: ask the operator of this service.', ...next }),
      );
    }
    await startSession(ctx, request, reply, name);
    return reply.redirect(safeNext(f['next']), 303);
  });

  app.post('/signup', RATE_LIMITED, async (request, reply) => {
    const f = formOf(request);
    if (!csrfValid(ctx, request, undefined, f['csrf'])) return refuseCsrf(reply);
    const name = f['name'] ?? '';
    const password = f['password'] ?? '';
    const again = (status: number, error: string) =>
      sendPage(reply, status, loginPage(ctx, preSignInCsrf(ctx, request, reply), { error, ...(f['next'] ? { next: f['next'] } : {}) }));
    if (!signupAllowed(ctx, name)) return again(403, `Sign-up is limited to the names the operator allowed; ask them to allow "${name}".`);
    const weak = passwordProblem(password);
    if (weak) return again(400, `Not created: ${weak}.`);
    if (password !== f['password2']) return again(400, 'Not created: the two passwords differ.');
    try {
      await createAccountWithPassword(ctx.store, name, await hashPassword(password));
    } catch (err) {
      if (err instanceof ApiError) return again(err.statusCode, `Not created: ${err.message}.`);
      throw err;
    }
    await startSession(ctx, request, reply, name);
    return reply.redirect(safeNext(f['next']), 303);
  });

  app.post('/logout', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (session && !csrfValid(ctx, request, session, formOf(request)['csrf'])) return refuseCsrf(reply);
    await endSession(ctx, request, reply, session);
    return reply.redirect('/login', 303);
  });

  registerTokenPages(app, ctx);
  registerSecretPages(app, ctx);
}

type TokenList = Awaited<ReturnType<ServiceDeps['store']['listTokens']>>;

function tokensPage(ctx: ServiceDeps, s: SignedInSession, list: TokenList, shown?: { name: string; token: string }) {
  const revoke = (id: string) =>
    html`<form class="inline" method="post" action="/account/tokens/${id}/revoke"><input type="hidden" name="csrf" value="${s.csrf}">
<button>Revoke</button></form>`;
  const rows = list.map(
    (t) => html`<tr data-token-id="${t.id}"><td>${t.name}</td><td>${t.createdAt.slice(0, 16).replace('T', ' ')}</td>
<td>${t.expiresAt ? t.expiresAt.slice(0, 10) : 'never'}</td><td>${revoke(t.id)}</td></tr>`,
  );
  const created = shown
    ? html`<p>Your new token <b>${shown.name}</b>. Copy it now: it is not shown again.</p><p class="secret" id="new-token">${shown.token}</p>
<p>Use it with <code>devtool context use ${ctx.config.publicUrl ?? '<service url>'} --token &lt;token&gt;</code> or DEVTOOL_TOKEN.</p>`
    : '';
  return page({
    title: 'Personal access tokens',
    user: s.user,
    admin: s.admin,
    current: 'tokens',
    csrf: s.csrf,
    body: html`${created}
<table><thead><tr><th>Name</th><th>Created (UTC)</th><th>Expires</th><th></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="4">No tokens.</td></tr>`}</tbody></table>
<h2>Create a token</h2>
<form method="post" action="/account/tokens" id="create-token"><input type="hidden" name="csrf" value="${s.csrf}">
<label>Name <input type="text" name="name" required maxlength="100"></label>
<label>Expires in days (empty: never) <input type="text" name="expiresInDays" inputmode="numeric"></label>
<button>Create token</button></form>`,
  });
}

function registerTokenPages(app: App, ctx: ServiceDeps): void {
  app.get('/account/tokens', async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    return sendPage(reply, 200, tokensPage(ctx, s, await liveTokens(ctx.store, s.user, ctx.now())));
  });

  app.post('/account/tokens', RATE_LIMITED, async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    const f = formOf(request);
    if (!csrfValid(ctx, request, s, f['csrf'])) return refuseCsrf(reply);
    const name = (f['name'] ?? '').trim();
    const days = (f['expiresInDays'] ?? '').trim();
    const error = (text: string) =>
      sendPage(
        reply,
        400,
        page({
          title: 'Token not created',
          user: s.user,
          admin: s.admin,
          csrf: s.csrf,
          error: text,
          body: html`<p><a href="/account/tokens">Back to the tokens</a></p>`,
        }),
      );
    if (!name || name.length > 100) return error('A token needs a name of 1 to 100 characters.');
    if (days && !(/^\d{1,4}$/.test(days) && Number(days) >= 1 && Number(days) <= 3650))
      return error('Expires in days: a whole number from 1 to 3650, or empty.');
    const { token, record } = newToken(s.user, name, ctx.now(), days ? Number(days) : undefined);
    await ctx.store.addToken(record);
    return sendPage(reply, 201, tokensPage(ctx, s, await liveTokens(ctx.store, s.user, ctx.now()), { name, token }));
  });

  app.post('/account/tokens/:id/revoke', async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    if (!csrfValid(ctx, request, s, formOf(request)['csrf'])) return refuseCsrf(reply);
    const id = (request.params as { id: string }).id;
    if (!/^[a-f0-9]{1,64}$/.test(id) || !(await ctx.store.deleteToken(s.user, id))) {
      return sendPage(
        reply,
        404,
        page({
          title: 'No such token',
          user: s.user,
          admin: s.admin,
          csrf: s.csrf,
          error: `You have no token ${id}.`,
          body: html`<p><a href="/account/tokens">Back</a></p>`,
        }),
      );
    }
    return reply.redirect('/account/tokens', 303);
  });
}

function registerSecretPages(app: App, ctx: ServiceDeps): void {
  const secretsPage = async (s: SignedInSession, status: number, reply: FastifyReply, error?: string) => {
    const names = await ctx.store.secretNames(s.user);
    const rows = names.map(
      (n) => html`<tr data-secret="${n}"><td><code>${n}</code></td><td><form class="inline" method="post" action="/account/secrets/${n}/delete">
<input type="hidden" name="csrf" value="${s.csrf}"><button>Delete</button></form></td></tr>`,
    );
    return sendPage(
      reply,
      status,
      page({
        title: 'Stored secrets',
        user: s.user,
        admin: s.admin,
        current: 'secrets',
        csrf: s.csrf,
        ...(error ? { error } : {}),
        body: html`<p>Used as <code>\${NAME}</code> in Compose files when you deploy. Values are never shown again.</p>
<table><tbody>${rows.length ? rows : html`<tr><td>No stored secrets.</td></tr>`}</tbody></table>
<h2>Set a secret</h2><form method="post" action="/account/secrets" id="set-secret"><input type="hidden" name="csrf" value="${s.csrf}">
<label>Name <input type="text" name="name" required pattern="${SECRET_NAME_PATTERN.slice(1, -1)}"></label>
<label>Value <input type="password" name="value" autocomplete="off"></label><button>Save</button></form>`,
      }),
    );
  };

  app.get('/account/secrets', async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    return s ? secretsPage(s, 200, reply) : reply;
  });

  app.post('/account/secrets', async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    const f = formOf(request);
    if (!csrfValid(ctx, request, s, f['csrf'])) return refuseCsrf(reply);
    const name = f['name'] ?? '';
    const value = f['value'] ?? '';
    if (!new RegExp(SECRET_NAME_PATTERN).test(name) || name.length > 253) return secretsPage(s, 400, reply, `Invalid name "${name}": ${SECRET_NAME_RULE}.`);
    if (value.length > SECRET_VALUE_MAX) return secretsPage(s, 400, reply, `The value is longer than ${SECRET_VALUE_MAX / 1024} KiB.`);
    const others = Object.entries(await ctx.store.secretValues(s.user)).filter(([n]) => n !== name);
    const total = others.reduce((sum, [n, v]) => sum + n.length + Buffer.byteLength(v), name.length + Buffer.byteLength(value));
    if (total > SECRETS_TOTAL_MAX)
      return secretsPage(s, 413, reply, `Stored secrets are limited to ${SECRETS_TOTAL_MAX / 1024} KiB in all: delete some first.`);
    await ctx.store.putSecret(s.user, name, value);
    return reply.redirect('/account/secrets', 303);
  });

  app.post('/account/secrets/:name/delete', async (request, reply) => {
    const s = await requireSession(ctx, request, reply);
    if (!s) return reply;
    if (!csrfValid(ctx, request, s, formOf(request)['csrf'])) return refuseCsrf(reply);
    const name = (request.params as { name: string }).name;
    if (!(await ctx.store.deleteSecret(s.user, name))) return secretsPage(s, 404, reply, `No stored secret ${name}.`);
    return reply.redirect('/account/secrets', 303);
  });
}
