/**
 * Login without a browser on this machine (an SSH session, a container, WSL without one): the
 * device authorization grant of RFC 8628. The service gives a short user code and a page; the user
 * opens that page on any device and signs in there; meanwhile the CLI asks the token endpoint every
 * `interval` seconds until the answer is a token, a refusal, or the code expired. `slow_down` adds
 * 5 seconds to the interval, as the RFC says.
 */
import { formatDuration } from '../../base/duration.ts';
import { DevtoolError } from '../../base/errors.ts';
import { realClock, type WaitClock } from '../../base/wait.ts';

/** The service's answer to a device authorization request (RFC 8628, section 3.2). */
export interface DeviceAuthorization {
  readonly deviceCode: string;
  readonly userCode: string;
  readonly verificationUri: string;
  /** The page with the code already filled in, when the service offers one. */
  readonly verificationUriComplete?: string;
  readonly expiresInSec: number;
  readonly intervalSec: number;
}

/** One answer of the token endpoint while the user has not finished (RFC 8628, section 3.5). */
export type DevicePoll<T> =
  | { readonly status: 'token'; readonly token: T }
  | { readonly status: 'authorization_pending' }
  | { readonly status: 'slow_down' }
  | { readonly status: 'access_denied' }
  | { readonly status: 'expired_token' };

const SLOW_DOWN_STEP_SEC = 5;
/** RFC 8628: "If no value is provided, clients MUST use 5 as the default." */
const DEFAULT_INTERVAL_SEC = 5;

/** The lines a user reads: where to go and which code to type. */
export function deviceInstructions(a: DeviceAuthorization): string {
  const direct = a.verificationUriComplete ? `\n  or open ${a.verificationUriComplete}` : '';
  return `To sign in, open ${a.verificationUri} on any device and enter the code ${a.userCode}${direct}\n`;
}

/** Asks `poll` at the service's pace until it answers with a token; throws a one-line error otherwise. */
export async function pollDeviceToken<T>(a: DeviceAuthorization, poll: () => Promise<DevicePoll<T>>, clock: WaitClock = realClock): Promise<T> {
  const deadline = clock.now() + a.expiresInSec * 1000;
  let intervalSec = a.intervalSec > 0 ? a.intervalSec : DEFAULT_INTERVAL_SEC;
  for (;;) {
    await clock.sleep(Math.min(intervalSec * 1000, Math.max(0, deadline - clock.now())));
    const answer = await poll();
    switch (answer.status) {
      case 'token':
        return answer.token;
      case 'access_denied':
        throw new DevtoolError('the sign-in was refused on the service page; run the command again to retry');
      case 'expired_token':
        throw expired(a);
      case 'slow_down':
        intervalSec += SLOW_DOWN_STEP_SEC;
        break;
      case 'authorization_pending':
        break;
    }
    if (clock.now() >= deadline) throw expired(a);
  }
}

function expired(a: DeviceAuthorization): DevtoolError {
  return new DevtoolError(
    `the code ${a.userCode} expired after ${formatDuration(a.expiresInSec * 1000)} without a sign-in; run the command again for a new one`,
  );
}
