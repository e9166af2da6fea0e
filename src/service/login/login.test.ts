/** Which login runs where, with a fake service client (the real one: test/e2e/service-login.e2e.test.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TokenGrantResult } from '../client.ts';
import type { TokenGrantRequestBody } from '../../../api/routes.ts';
import { logIn, type LoginClient } from './login.ts';

const clock = { now: () => 0, sleep: async () => {} };

function fakeClient(answers: TokenGrantResult[]): LoginClient & { grants: TokenGrantRequestBody[] } {
  const grants: TokenGrantRequestBody[] = [];
  return {
    grants,
    deviceCode: async () => ({
      device_code: 'ABCDEFGH.secret',
      user_code: 'ABCD-EFGH',
      verification_uri: 'https://svc.example/device',
      verification_uri_complete: 'https://svc.example/device?code=ABCD-EFGH',
      expires_in: 600,
      interval: 5,
    }),
    tokenGrant: async (body) => {
      grants.push(body);
      return answers.shift()!;
    },
  };
}

test('in CI no login starts: one line naming --token and DEVTOOL_TOKEN', async () => {
  const client = fakeClient([]);
  await assert.rejects(
    logIn({
      url: 'https://svc.example',
      client,
      host: { env: { CI: 'true', DISPLAY: ':0' }, platform: 'linux', interactive: true },
      machine: 'm',
      say: () => {},
    }),
    /not logged in to https:\/\/svc\.example, and devtool never starts a login in CI: pass --token <API_TOKEN> or set DEVTOOL_URL and DEVTOOL_TOKEN/,
  );
  assert.equal(client.grants.length, 0);
});

test('without a browser: the device code is printed and polled until the token', async () => {
  const client = fakeClient([
    { error: 'authorization_pending', description: 'waiting' },
    { token: { access_token: 'dvt_x', token_type: 'Bearer', user: 'ann' } },
  ]);
  let said = '';
  const r = await logIn({
    url: 'https://svc.example',
    client,
    host: { env: {}, platform: 'linux', interactive: true },
    machine: 'box',
    say: (t) => (said += t),
    clock,
  });
  assert.deepEqual(r, { token: 'dvt_x', user: 'ann' });
  assert.match(said, /^No browser here \(no desktop.*\): signing in with a device code\.\nTo sign in, open https:\/\/svc\.example\/device .*ABCD-EFGH/);
  assert.equal(client.grants[0]!.grant_type, 'urn:ietf:params:oauth:grant-type:device_code');
});

test('with a browser: the authorize address carries PKCE and the loopback redirect; the code is exchanged with the verifier', async () => {
  const client = fakeClient([{ token: { access_token: 'dvt_y', token_type: 'Bearer', user: 'bob' } }]);
  const opened: string[] = [];
  const open = async (url: string) => {
    opened.push(url);
    const q = new URL(url).searchParams;
    // The browser, after consent, comes back to the loopback receiver.
    void fetch(`${q.get('redirect_uri')}?code=the-code&state=${q.get('state')}`, { redirect: 'manual' });
    return true;
  };
  const r = await logIn({
    url: 'https://svc.example',
    client,
    host: { env: { DISPLAY: ':0' }, platform: 'linux', interactive: true },
    machine: 'box',
    say: () => {},
    open,
  });
  assert.deepEqual(r, { token: 'dvt_y', user: 'bob' });
  const q = new URL(opened[0]!).searchParams;
  assert.equal(q.get('code_challenge_method'), 'S256');
  assert.equal(q.get('client_id'), 'devtool-cli');
  const grant = client.grants[0]!;
  assert.equal(grant.code, 'the-code');
  assert.equal(grant.redirect_uri, q.get('redirect_uri'));
  const { pkceChallenge } = await import('../../base/hash.ts');
  assert.equal(pkceChallenge(grant.code_verifier!), q.get('code_challenge'));
});
