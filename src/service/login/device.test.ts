/** The device-code poller's pace and endings, on a clock that does not really wait. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeClock } from '../../base/testing.ts';
import { deviceInstructions, pollDeviceToken, type DeviceAuthorization, type DevicePoll } from './device.ts';

const auth = (over: Partial<DeviceAuthorization> = {}): DeviceAuthorization => ({
  deviceCode: 'dc',
  userCode: 'WDJB-MJHT',
  verificationUri: 'https://svc.example/device',
  expiresInSec: 60,
  intervalSec: 2,
  ...over,
});

function answers(list: DevicePoll<string>[]): () => Promise<DevicePoll<string>> {
  let i = 0;
  return async () => list[Math.min(i++, list.length - 1)]!;
}

test('pending answers are polled at the service interval; slow_down adds 5 s for good', async () => {
  const clock = fakeClock();
  const token = await pollDeviceToken(
    auth(),
    answers([{ status: 'authorization_pending' }, { status: 'slow_down' }, { status: 'authorization_pending' }, { status: 'token', token: 't-1' }]),
    clock,
  );
  assert.equal(token, 't-1');
  assert.deepEqual(clock.slept, [2000, 2000, 7000, 7000]);
});

test('a refusal and an expired code each end with one line saying what to do', async () => {
  await assert.rejects(
    pollDeviceToken(auth(), answers([{ status: 'access_denied' }]), fakeClock()),
    /the sign-in was refused on the service page; run the command again/,
  );
  await assert.rejects(pollDeviceToken(auth(), answers([{ status: 'expired_token' }]), fakeClock()), /the code WDJB-MJHT expired after 1m0s/);
});

test('the code runs out on our side too, when the service keeps saying pending', async () => {
  const clock = fakeClock();
  await assert.rejects(pollDeviceToken(auth({ expiresInSec: 5 }), answers([{ status: 'authorization_pending' }]), clock), /expired after 5s/);
  assert.equal(
    clock.slept.reduce((a, b) => a + b, 0),
    5000,
    'never waits past the expiry',
  );
});

test('no interval from the service means 5 s; the instructions name the page and the code', async () => {
  const clock = fakeClock();
  await pollDeviceToken(auth({ intervalSec: 0 }), answers([{ status: 'token', token: 't' }]), clock);
  assert.deepEqual(clock.slept, [5000]);
  assert.equal(
    deviceInstructions(auth({ verificationUriComplete: 'https://svc.example/device?code=WDJB-MJHT' })),
    'To sign in, open https://svc.example/device on any device and enter the code WDJB-MJHT\n  or open https://svc.example/device?code=WDJB-MJHT\n',
  );
});
