/** The loopback redirect target, over real HTTP on 127.0.0.1. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listenForAuthorizationCode } from './loopback.ts';

const get = (url: string) => fetch(url, { redirect: 'manual' });

test('the code comes back with our state; a stranger with another state is refused and the wait goes on', async () => {
  const r = await listenForAuthorizationCode({ state: 's1', timeoutMs: 10_000 });
  assert.match(r.redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  const stranger = await get(`${r.redirectUri}?code=evil&state=other`);
  assert.equal(stranger.status, 400);
  assert.equal((await get(r.redirectUri.replace('/callback', '/'))).status, 404);
  const ok = await get(`${r.redirectUri}?code=c-123&state=s1`);
  assert.equal(ok.status, 200);
  assert.match(await ok.text(), /Signed in/);
  assert.equal(await r.code, 'c-123');
});

test('the browser is sent on to the service page, and an error from the service ends the wait with its description', async () => {
  const r = await listenForAuthorizationCode({ state: 's2', timeoutMs: 10_000, doneUrl: (o) => `https://svc.example/login/${o}` });
  const res = await get(`${r.redirectUri}?error=access_denied&error_description=sign-up+is+closed&state=s2`);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), 'https://svc.example/login/refused');
  await assert.rejects(r.code, /the service refused the sign-in: sign-up is closed/);
});

test('no browser answer within the time: the error names the way without a browser', async () => {
  const r = await listenForAuthorizationCode({ state: 's3', timeoutMs: 1_000 });
  await assert.rejects(r.code, /no answer from the browser after 1s; log in without a browser with --token or DEVTOOL_TOKEN/);
  await assert.rejects(get(`${r.redirectUri}?code=late&state=s3`), 'the port is closed');
});
