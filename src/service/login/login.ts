/**
 * `devtool context use <URL>` without a token: the login of the CLI. With a browser here
 * (browser.ts decides), the loopback redirect with PKCE; without one, the device code, which the
 * user finishes on any device. In CI neither is started: a login that waits for a person would
 * hang the job (lessons-from-peers), so the answer is one line naming --token and DEVTOOL_TOKEN.
 */
import { DevtoolError } from '../../base/errors.ts';
import type { WaitClock } from '../../base/wait.ts';
import type { ServiceClient, TokenGrantResult } from '../client.ts';
import { CLI_CLIENT_ID, DEVICE_GRANT_TYPE, type DeviceCodeAnswerBody, type TokenGrantRequestBody } from '../../../api/routes.ts';
import { type BrowserHost, browserUnavailable, openInBrowser } from './browser.ts';
import { type DeviceAuthorization, deviceInstructions, pollDeviceToken } from './device.ts';
import { listenForAuthorizationCode } from './loopback.ts';
import { createPkcePair, randomState } from './pkce.ts';

/** The two calls of the service client a login makes. */
export interface LoginClient {
  deviceCode(machine: string): Promise<DeviceCodeAnswerBody>;
  tokenGrant(body: TokenGrantRequestBody): Promise<TokenGrantResult>;
}

/** Those two calls on the service's client. */
export const loginClient = (client: ServiceClient): LoginClient => ({
  deviceCode: (machine) => client.call('deviceCode', { body: { client_id: CLI_CLIENT_ID, machine } }),
  tokenGrant: client.tokenGrant,
});

export interface LoginOptions {
  url: string;
  client: LoginClient;
  host: BrowserHost;
  /** Names the API token the login makes: "devtool CLI on <machine>". */
  machine: string;
  /** Where the instructions go (stderr: stdout keeps the command's own result line). */
  say(text: string): void;
  open?: (url: string) => Promise<boolean>;
  clock?: WaitClock;
  /** How long the browser may take; default 5 minutes. */
  browserTimeoutMs?: number;
}

export interface LoggedIn {
  token: string;
  user: string;
}

/** Set (and not "false" or "0"): running in CI. */
export function inCi(env: Readonly<NodeJS.ProcessEnv>): boolean {
  const v = env['CI'] ?? '';
  return v !== '' && v !== 'false' && v !== '0';
}

/** The line a command gives instead of a login in CI. */
export function ciLoginRefusal(url: string, why: string): DevtoolError {
  return new DevtoolError(
    `${why}, and devtool never starts a login in CI: pass --token <API_TOKEN> or set DEVTOOL_URL and DEVTOOL_TOKEN (create a token on ${url}/account/tokens)`,
  );
}

export async function logIn(o: LoginOptions): Promise<LoggedIn> {
  if (inCi(o.host.env)) throw ciLoginRefusal(o.url, `not logged in to ${o.url}`);
  const noBrowser = browserUnavailable(o.host);
  if (noBrowser === undefined) return browserLogin(o);
  return deviceLogin(o, noBrowser);
}

async function browserLogin(o: LoginOptions): Promise<LoggedIn> {
  const pkce = createPkcePair();
  const state = randomState();
  const receiver = await listenForAuthorizationCode({
    state,
    timeoutMs: o.browserTimeoutMs ?? 300_000,
    doneUrl: (outcome) => `${o.url}/auth/done?outcome=${outcome}`,
  });
  try {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: CLI_CLIENT_ID,
      redirect_uri: receiver.redirectUri,
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: pkce.method,
      machine: o.machine,
    });
    const authorizeUrl = `${o.url}/auth/authorize?${query}`;
    o.say(`Opening the browser to sign in to ${o.url}; if it does not open, go to:\n  ${authorizeUrl}\n`);
    if (!(await (o.open ?? openInBrowser)(authorizeUrl))) o.say('The browser could not be opened: open the address above yourself.\n');
    const code = await receiver.code;
    const r = await o.client.tokenGrant({ grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: receiver.redirectUri });
    if ('error' in r) throw new DevtoolError(`the login failed: ${r.description}`);
    return { token: r.token.access_token, user: r.token.user };
  } finally {
    receiver.close();
  }
}

const POLL_ANSWERS = new Set(['authorization_pending', 'slow_down', 'access_denied', 'expired_token']);

async function deviceLogin(o: LoginOptions, noBrowser: string): Promise<LoggedIn> {
  const d = await o.client.deviceCode(o.machine);
  o.say(`No browser here (${noBrowser}): signing in with a device code.\n`);
  const auth: DeviceAuthorization = {
    deviceCode: d.device_code,
    userCode: d.user_code,
    verificationUri: d.verification_uri,
    verificationUriComplete: d.verification_uri_complete,
    expiresInSec: d.expires_in,
    intervalSec: d.interval,
  };
  o.say(deviceInstructions(auth));
  return pollDeviceToken<LoggedIn>(
    auth,
    async () => {
      const r = await o.client.tokenGrant({ grant_type: DEVICE_GRANT_TYPE, device_code: d.device_code });
      if ('token' in r) return { status: 'token', token: { token: r.token.access_token, user: r.token.user } };
      if (POLL_ANSWERS.has(r.error)) return { status: r.error as 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' };
      throw new DevtoolError(`the login failed: ${r.description}`);
    },
    o.clock,
  );
}
