/** Accounts, sessions, CSRF, browser (PKCE) and device-code login, through fastify.inject against the in-memory store. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createPkcePair } from '../src/service/login/pkce.ts';
import { buildApp, type ServiceConfig } from './app.ts';
import { MemoryStore } from './store/memory.ts';

const CONFIG: ServiceConfig = { version: '9.9.9', publicUrl: 'https://devtool.example', rateLimit: { max: 1000, timeWindowMs: 60_000 } };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const REDIRECT = 'http://127.0.0.1:43117/callback';

async function harness(config: Partial<ServiceConfig> = {}) {
  const store = new MemoryStore();
  const clock = { now: new Date('2026-01-01T00:00:00Z') };
  const app = await buildApp({ store, config: { ...CONFIG, ...config }, now: () => clock.now, logStream: false });
  return { app, store, clock };
}
type H = Awaited<ReturnType<typeof harness>>;

/** A browser: keeps cookies, reads the CSRF token of the last page. */
function browser(h: H) {
  const jar = new Map<string, string>();
  let lastBody = '';
  const send = async (method: 'GET' | 'POST', url: string, form?: Record<string, string>) => {
    const res = await h.app.inject({
      method,
      url,
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? FORM : {}) },
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    });
    const cookies = res.headers['set-cookie'];
    for (const c of cookies === undefined ? [] : Array.isArray(cookies) ? cookies : [cookies]) {
      const [pair] = c.split(';');
      const [k, v] = pair!.split('=') as [string, string];
      if (v === '') jar.delete(k);
      else jar.set(k, v);
    }
    lastBody = res.body;
    return res;
  };
  return {
    jar,
    get: (url: string) => send('GET', url),
    post: (url: string, form: Record<string, string>) => send('POST', url, form),
    csrf: () => /name="csrf" value="([^"]+)"/.exec(lastBody)?.[1] ?? '',
  };
}

async function signUp(h: H, name = 'ann', password = 'correct horse') {
  const b = browser(h);
  await b.get('/login');
  const res = await b.post('/signup', { csrf: b.csrf(), name, password, password2: password });
  return { b, res };
}

function authorizeUrl(challenge: string, over: Record<string, string> = {}) {
  const q = {
    response_type: 'code',
    client_id: 'devtool-cli',
    redirect_uri: REDIRECT,
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    machine: 'laptop',
    ...over,
  };
  return `/auth/authorize?${new URLSearchParams(q)}`;
}

/** Signs up, consents, and returns the code the browser is redirected with. */
async function authorizationCode(h: H, challenge: string) {
  const { b } = await signUp(h);
  const consent = await b.get(authorizeUrl(challenge));
  assert.equal(consent.statusCode, 200);
  assert.match(consent.body, /The devtool CLI on <b>laptop<\/b> asks to use your account <b>ann<\/b>/);
  const fields = Object.fromEntries(
    [...consent.body.matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]),
  );
  const res = await b.post('/auth/authorize', { ...fields, decision: 'allow' });
  assert.equal(res.statusCode, 303);
  const location = new URL(res.headers.location as string);
  assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
  assert.equal(location.searchParams.get('state'), 'st-1');
  return location.searchParams.get('code')!;
}

const tokenGrant = (h: H, body: Record<string, string>) =>
  h.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams(body).toString() });

describe('accounts and sessions', () => {
  test('sign-up makes the account, its namespace and a hashed password, and signs in with a __Host-, Secure, HttpOnly, Lax cookie', async () => {
    const h = await harness();
    const { b, res } = await signUp(h);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/');
    const cookie = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('__Host-devtool_session='))!;
    assert.match(cookie, /; Path=\/;/);
    assert.doesNotMatch(cookie, /Domain=/i);
    assert.match(cookie, /; Secure$/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Secure/);
    assert.equal(h.store.namespaces.get('ann-devtool')?.owner, 'ann');
    assert.match(h.store.passwords.get('ann')!, /^scrypt\$16384\$8\$1\$/);
    assert.equal(
      [...h.store.grants.values()].some((g) => JSON.stringify(g).includes(b.jar.get('__Host-devtool_session')!)),
      false,
      'only the hash is stored',
    );
    const page = await b.get('/account/tokens');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Sign out ann/);
  });

  test('over plain http on a loopback address the cookie is not Secure (browsers would drop it); elsewhere it is', async () => {
    const h = await harness({ publicUrl: undefined });
    const local = await h.app.inject({ method: 'GET', url: '/login', headers: { host: '127.0.0.1:8080' } });
    assert.doesNotMatch(String(local.headers['set-cookie']), /Secure/);
    assert.match(String(local.headers['set-cookie']), /^devtool_csrf=/, 'no __Host- prefix without Secure: browsers would drop it');
    const remote = await h.app.inject({ method: 'GET', url: '/login', headers: { host: 'devtool.example' } });
    assert.match(String(remote.headers['set-cookie']), /^__Host-devtool_csrf=.*Secure/);
  });

  test('cookies a sibling host can plant (no __Host- prefix) are not read: neither a session nor a pre-sign-in CSRF token', async () => {
    const h = await harness();
    const victim = (await signUp(h, 'ann')).b;
    const attacker = (await signUp(h, 'mallory')).b;
    const planted = `devtool_session=${attacker.jar.get('__Host-devtool_session')}`;
    const own = `__Host-devtool_session=${victim.jar.get('__Host-devtool_session')}`;
    const page = await h.app.inject({ method: 'GET', url: '/account/tokens', headers: { cookie: `${planted}; ${own}` } });
    assert.match(page.body, /Sign out ann/);
    // Login CSRF: a planted double-submit cookie and the same value in a cross-site form.
    const forged = await h.app.inject({
      method: 'POST',
      url: '/login',
      headers: { ...FORM, cookie: `devtool_csrf=${'x'.repeat(43)}` },
      payload: new URLSearchParams({ csrf: 'x'.repeat(43), name: 'mallory', password: 'correct horse' }).toString(),
    });
    assert.equal(forged.statusCode, 403);
    // A signed-in form with another session's CSRF token.
    await attacker.get('/account/tokens');
    const res = await victim.post('/account/tokens', { csrf: attacker.csrf(), name: 'x' });
    assert.equal(res.statusCode, 403);
  });

  test('sign-in is throttled per account, whichever address guesses, without saying whether the account exists', async () => {
    const h = await harness({ accountLoginLimit: { max: 3, timeWindowMs: 60_000 } });
    await signUp(h);
    const statuses = async (name: string, n: number, password = 'wrong password') => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const b = browser(h);
        await b.get('/login');
        out.push(
          (
            await h.app.inject({
              method: 'POST',
              url: '/login',
              remoteAddress: `198.51.100.${i}`,
              headers: { ...FORM, cookie: [...b.jar].map(([k, v]) => `${k}=${v}`).join('; ') },
              payload: new URLSearchParams({ csrf: b.csrf(), name, password }).toString(),
            })
          ).statusCode,
        );
      }
      return out;
    };
    assert.deepEqual(await statuses('ann', 4), [401, 401, 401, 429]);
    assert.deepEqual(await statuses('ann', 1, 'correct horse'), [429], 'even the right password waits');
    assert.deepEqual(await statuses('nobody', 4), [401, 401, 401, 429]);
    assert.deepEqual(await statuses('bob', 1), [401], 'other accounts are not affected');
    h.clock.now = new Date(h.clock.now.getTime() + 61_000);
    assert.deepEqual(await statuses('ann', 1, 'correct horse'), [303]);
  });

  test('the sign-up policy: an allow-list refuses other names; a taken name and a short password are refused', async () => {
    const h = await harness({ signup: { mode: 'allowList', allow: ['ann'] } });
    const refused = await signUp(h, 'bob');
    assert.equal(refused.res.statusCode, 403);
    assert.match(refused.res.body, /Sign-up is limited to the names the operator allowed; ask them to allow &quot;bob&quot;/);
    assert.equal(h.store.users.has('bob'), false);
    assert.equal((await signUp(h, 'ann')).res.statusCode, 303);
    assert.equal((await signUp(h, 'ann')).res.statusCode, 409);
    const open = await harness();
    const weak = await signUp(open, 'cid', 'short');
    assert.equal(weak.res.statusCode, 400);
    assert.match(weak.res.body, /at least 8 characters/);
  });

  test('sign-in: the right password opens a session, a wrong one or an unknown name does not', async () => {
    const h = await harness();
    await signUp(h);
    const b = browser(h);
    await b.get('/login');
    const wrong = await b.post('/login', { csrf: b.csrf(), name: 'ann', password: 'wrong password' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /Wrong user name or password/);
    const unknown = await b.post('/login', { csrf: b.csrf(), name: 'nobody', password: 'correct horse' });
    assert.equal(unknown.statusCode, 401);
    assert.equal(b.jar.has('__Host-devtool_session'), false);
    const ok = await b.post('/login', { csrf: b.csrf(), name: 'ann', password: 'correct horse', next: '//evil.example/x' });
    assert.equal(ok.statusCode, 303);
    assert.equal(ok.headers.location, '/', 'never redirected off the service');
    const { safeNext } = await import('./routes/login-pages.ts');
    for (const evil of ['//evil.example', '/\\evil.example', '/\t/evil.example', 'https://evil.example', '/x\n']) assert.equal(safeNext(evil), '/', evil);
    assert.equal(safeNext('/device?code=ABCD-EFGH'), '/device?code=ABCD-EFGH');
  });

  test('a form POST without its CSRF token is refused and does nothing', async () => {
    const h = await harness();
    const { b } = await signUp(h);
    const forged = await b.post('/account/tokens', { name: 'forged' });
    assert.equal(forged.statusCode, 403);
    assert.match(forged.body, /CSRF check failed/);
    assert.equal((await h.store.listTokens('ann')).length, 0);
    const stranger = browser(h);
    const login = await stranger.post('/login', { csrf: 'x'.repeat(43), name: 'ann', password: 'correct horse' });
    assert.equal(login.statusCode, 403, 'sign-in needs the double-submit cookie');
  });

  test('sign-in is rate-limited per client: the page says so', async () => {
    const h = await harness({ rateLimit: { max: 2, timeWindowMs: 60_000 } });
    const b = browser(h);
    await b.get('/login');
    const csrf = b.csrf();
    for (let i = 0; i < 2; i++) assert.equal((await b.post('/login', { csrf, name: 'ann', password: 'guess guess' })).statusCode, 401);
    const limited = await b.post('/login', { csrf, name: 'ann', password: 'guess guess' });
    assert.equal(limited.statusCode, 429);
    assert.match(limited.headers['content-type'] as string, /text\/html/);
    assert.match(limited.body, /too many requests: try again in \d+ s/);
  });

  test('a session ends after its lifetime: the page sends the browser to sign in', async () => {
    const h = await harness({ sessionTtlMs: 3600_000 });
    const { b } = await signUp(h);
    assert.equal((await b.get('/account/tokens')).statusCode, 200);
    h.clock.now = new Date(h.clock.now.getTime() + 3600_001);
    const res = await b.get('/account/tokens');
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/login?next=%2Faccount%2Ftokens');
    assert.equal(await h.store.sweepExpiredGrants(h.clock.now), 0, 'the ended session was deleted when read');
  });

  test('a disabled account: its open session ends at once, and its password signs in no more until enabled', async () => {
    const h = await harness();
    const { b } = await signUp(h);
    assert.equal((await b.get('/account/tokens')).statusCode, 200);
    const { disableAccount, enableAccount } = await import('./accounts.ts');
    await disableAccount(h.store, 'ann');
    assert.equal((await b.get('/account/tokens')).statusCode, 303, 'sent to sign in');
    const again = browser(h);
    await again.get('/login');
    const refused = await again.post('/login', { csrf: again.csrf(), name: 'ann', password: 'correct horse' });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /This account is disabled/);
    assert.equal(again.jar.has('__Host-devtool_session'), false);
    await enableAccount(h.store, 'ann', h.clock.now, false);
    assert.equal((await again.post('/login', { csrf: again.csrf(), name: 'ann', password: 'correct horse' })).statusCode, 303);
  });

  test('tokens page: create shows the token once, it works on the API, revoke ends it; secrets list names only', async () => {
    const h = await harness();
    const { b } = await signUp(h);
    await b.get('/account/tokens');
    const created = await b.post('/account/tokens', { csrf: b.csrf(), name: 'ci <script>', expiresInDays: '' });
    assert.equal(created.statusCode, 201);
    assert.match(created.body, /ci &lt;script&gt;/, 'escaped');
    const token = /id="new-token">([^<]+)</.exec(created.body)![1]!;
    const me = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.json().name, 'ann');
    assert.doesNotMatch((await b.get('/account/tokens')).body, new RegExp(token), 'shown once');
    const id = [...h.store.tokens.values()][0]!.id;
    assert.equal((await b.post(`/account/tokens/${id}/revoke`, { csrf: b.csrf() })).statusCode, 303);
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } })).statusCode, 401);
    await b.get('/account/secrets');
    assert.equal((await b.post('/account/secrets', { csrf: b.csrf(), name: 'DB_PASSWORD', value: 's3cr3t-value' })).statusCode, 303);
    const secrets = await b.get('/account/secrets');
    assert.match(secrets.body, /DB_PASSWORD/);
    assert.doesNotMatch(secrets.body, /s3cr3t-value/);
    assert.equal((await b.post('/account/secrets/DB_PASSWORD/delete', { csrf: b.csrf() })).statusCode, 303);
    assert.deepEqual(await h.store.secretNames('ann'), []);
  });
});

describe('browser login (authorization code with PKCE)', () => {
  test('not signed in: authorize sends the browser to sign in and back', async () => {
    const h = await harness();
    const res = await browser(h).get(authorizeUrl(createPkcePair().challenge));
    assert.equal(res.statusCode, 303);
    assert.match(res.headers.location as string, /^\/login\?next=%2Fauth%2Fauthorize%3F/);
  });

  test('the code with its verifier gives an API token named after the machine; the code is single-use', async () => {
    const h = await harness();
    const pkce = createPkcePair();
    const code = await authorizationCode(h, pkce.challenge);
    const body = { grant_type: 'authorization_code', client_id: 'devtool-cli', code, code_verifier: pkce.verifier, redirect_uri: REDIRECT };
    const res = await tokenGrant(h, body);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().user, 'ann');
    assert.deepEqual(
      (await h.store.listTokens('ann')).map((t) => t.name),
      ['devtool CLI on laptop'],
    );
    const again = await tokenGrant(h, body);
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), { error: 'invalid_grant', error_description: 'unknown or already used authorization code: run the login again' });
  });

  test('a token request whose body is not JSON, or not UTF-8, is refused with 400 invalid_request, not a server error', async () => {
    const h = await harness();
    for (const payload of [Buffer.from([0xff, 0x5b, 0x6c]), Buffer.from('{"grant_type":')]) {
      const res = await h.app.inject({ method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/json' }, payload });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { error: 'invalid_request', error_description: "Body is not valid JSON but content-type is set to 'application/json'" });
    }
  });

  test('a wrong verifier is refused and burns the code; an expired code is refused', async () => {
    const h = await harness();
    const pkce = createPkcePair();
    const code = await authorizationCode(h, pkce.challenge);
    const body = { grant_type: 'authorization_code', code, code_verifier: createPkcePair().verifier, redirect_uri: REDIRECT };
    const res = await tokenGrant(h, body);
    assert.equal(res.json().error_description, 'code_verifier does not match the code_challenge (PKCE)');
    assert.equal((await tokenGrant(h, { ...body, code_verifier: pkce.verifier })).json().error, 'invalid_grant');
    const h2 = await harness();
    const code2 = await authorizationCode(h2, pkce.challenge);
    h2.clock.now = new Date(h2.clock.now.getTime() + 61_000);
    const late = await tokenGrant(h2, { grant_type: 'authorization_code', code: code2, code_verifier: pkce.verifier, redirect_uri: REDIRECT });
    assert.match(late.json().error_description, /expired/);
  });

  test('a redirect_uri that is not the loopback callback is refused without redirecting; no PKCE is sent back as an error', async () => {
    const h = await harness();
    const { b } = await signUp(h);
    for (const uri of ['https://evil.example/callback', 'http://127.0.0.1.evil.example:80/callback', 'http://127.0.0.1:8080/other']) {
      const res = await b.get(authorizeUrl(createPkcePair().challenge, { redirect_uri: uri }));
      assert.equal(res.statusCode, 400, uri);
      assert.match(res.body, /redirect_uri must be http:\/\/127\.0\.0\.1:&lt;port&gt;\/callback/);
    }
    const noPkce = await b.get(authorizeUrl('', { code_challenge_method: 'plain' }));
    assert.equal(noPkce.statusCode, 303);
    const back = new URL(noPkce.headers.location as string);
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.match(back.searchParams.get('error_description')!, /PKCE is required/);
  });

  test('denying sends access_denied back to the CLI', async () => {
    const h = await harness();
    const { b } = await signUp(h);
    const consent = await b.get(authorizeUrl(createPkcePair().challenge));
    const fields = Object.fromEntries([...consent.body.matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const res = await b.post('/auth/authorize', { ...fields, decision: 'deny' });
    assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'access_denied');
    assert.equal(h.store.grants.size, 1, 'only the session, no code');
  });
});

describe('device flow', () => {
  const start = async (h: H) =>
    (await h.app.inject({ method: 'POST', url: '/auth/device/code', payload: { client_id: 'devtool-cli', machine: 'ci-box' } })).json();
  const poll = (h: H, deviceCode: string) => tokenGrant(h, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode });
  const later = (h: H, ms: number) => (h.clock.now = new Date(h.clock.now.getTime() + ms));

  test('pending, slow_down when polled too fast, then the token once approved on the device page; used once', async () => {
    const h = await harness();
    const d = await start(h);
    assert.match(d.user_code, /^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/);
    assert.equal(d.verification_uri, 'https://devtool.example/device');
    assert.equal(d.interval, 5);
    assert.equal((await poll(h, d.device_code)).json().error, 'authorization_pending');
    assert.equal((await poll(h, d.device_code)).json().error, 'slow_down');
    later(h, 5000);
    assert.equal((await poll(h, d.device_code)).json().error, 'authorization_pending');
    const { b } = await signUp(h);
    await b.get(`/device?code=${d.user_code}`);
    const approved = await b.post('/device', { csrf: b.csrf(), code: d.user_code.toLowerCase().replace('-', ' '), decision: 'allow' });
    assert.equal(approved.statusCode, 200);
    assert.match(approved.body, /ci-box is signed in/);
    later(h, 5000);
    const res = await poll(h, d.device_code);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().user, 'ann');
    assert.deepEqual(
      (await h.store.listTokens('ann')).map((t) => t.name),
      ['devtool CLI on ci-box'],
    );
    assert.equal((await poll(h, d.device_code)).json().error, 'invalid_grant');
  });

  test('denied gives access_denied; an old code expired_token; a wrong secret invalid_grant; a forged approval is refused', async () => {
    const h = await harness();
    const { b } = await signUp(h);
    const d = await start(h);
    await b.get('/device');
    assert.equal((await b.post('/device', { code: d.user_code, decision: 'allow' })).statusCode, 403, 'no CSRF token');
    await b.get('/device');
    await b.post('/device', { csrf: b.csrf(), code: d.user_code, decision: 'deny' });
    assert.equal((await poll(h, d.device_code)).json().error, 'access_denied');
    const d2 = await start(h);
    assert.equal((await poll(h, `${d2.device_code.split('.')[0]}.wrong`)).json().error, 'invalid_grant');
    later(h, 601_000);
    assert.equal((await poll(h, d2.device_code)).json().error, 'expired_token');
    await b.get('/device');
    const unknown = await b.post('/device', { csrf: b.csrf(), code: d2.user_code, decision: 'allow' });
    assert.equal(unknown.statusCode, 400);
  });

  test('pending device codes are bounded per client address and in all; expired ones make room', async () => {
    const h = await harness({ pendingDeviceCodes: { total: 4, perClient: 2 } });
    const ask = (remoteAddress: string) =>
      h.app.inject({ method: 'POST', url: '/auth/device/code', remoteAddress, payload: { client_id: 'devtool-cli', machine: 'm' } });
    const statuses = async (address: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await ask(address)).statusCode);
      return out;
    };
    assert.deepEqual(await statuses('198.51.100.1', 3), [200, 200, 429]);
    const refused = await ask('198.51.100.1');
    assert.match(refused.json<{ error: string }>().error, /^too many device codes from this address wait for approval \(2\)/);
    assert.deepEqual(await statuses('198.51.100.2', 2), [200, 200]);
    assert.deepEqual(await statuses('198.51.100.3', 1), [429], 'the total is reached');
    assert.equal([...h.store.grants.values()].filter((g) => g.kind === 'device').length, 4);
    later(h, 601_000);
    assert.deepEqual(await statuses('198.51.100.3', 1), [200]);
  });
});
