/**
 * The CLI's client of the devtool service: `call(route, input)` calls any route of the API's table
 * (api/routes.ts) by its name, typed from its schemas, over node:http/node:https (http.ts), each call
 * bounded by a timeout. A refusal (4xx) becomes a DevtoolError whose message is the service's
 * one-line reason; an unreachable or failing service, one line saying so.
 */
import { formatDuration } from '../base/duration.ts';
import { DevtoolError } from '../base/errors.ts';
import { oneLine } from '../base/text.ts';
import { CONNECT_TIMEOUT_VARIABLE, connectTimeoutText, DEFAULT_NETWORK_TIMEOUTS, RESPONSE_TIMEOUT_VARIABLE } from '../base/network-timeouts.ts';
import {
  ANALYTICS_ACTION_PATTERN,
  CLI_CLIENT_ID,
  type RouteAnswer,
  type RouteInput,
  type RouteName,
  type RouteSpec,
  routes,
  SERVICE_VERSION_HEADER,
  type TokenGrantAnswerBody,
} from '../../api/routes.ts';
import { type Answer, exchange } from './http.ts';
import { trustedRoots, UNTRUSTED_CODES, untrustedLine } from './tls.ts';

const ANALYTICS_ACTION = new RegExp(ANALYTICS_ACTION_PATTERN);

export { trustedCas } from './tls.ts';

/** The token endpoint's answer: a token, or the OAuth error code the caller acts on (RFC 6749 5.2). */
export type TokenGrantResult = { token: TokenGrantAnswerBody } | { error: string; description: string };

/** How a route that streams text hands it over: each piece as it comes, until the stream ends or `signal` aborts. */
export interface CallOptions {
  onText?: (text: string) => void;
  signal?: AbortSignal;
}

type Parts = { params?: Record<string, string>; body?: unknown } & CallOptions;

export interface ServiceClientOptions {
  /** The service URL, e.g. https://devtool.example (normalizeServiceUrl). */
  url: string;
  token?: string;
  /** Per call, the whole exchange; default 30 s (DEVTOOL_RESPONSE_TIMEOUT, through the factory). */
  timeoutMs?: number;
  /** Per call, to a connected socket; default: only timeoutMs (the factory passes DEVTOOL_CONNECT_TIMEOUT). */
  connectTimeoutMs?: number;
  /** Told, once, of a connection or an answer slower than a few seconds: what the command waits for. */
  notice?: (line: string) => void;
  /** PEM of a CA to trust next to the system's (DEVTOOL_CA_CERT, or the one stored with the context). */
  ca?: string;
}

/** A refusal by the service: `status` is the HTTP status (401: log in again). */
export class ServiceError extends DevtoolError {
  constructor(
    message: string,
    readonly status: number,
    /** The OAuth error code and its description, from the login endpoints. */
    readonly oauth?: { error: string },
  ) {
    super(message);
  }
}

export class ServiceClient {
  /**
   * The devtool version the service named in its latest answer (SERVICE_VERSION_HEADER of
   * api/schemas.ts), undefined until one names it: what the newer-version notice reads.
   */
  serviceVersion: string | undefined;
  private readonly base: string;
  private readonly timeoutMs: number;
  /** The CAs an https: service is checked against, when the user trusts one more than the system's. */
  private readonly ca: readonly string[] | undefined;

  constructor(private readonly opts: ServiceClientOptions) {
    this.base = opts.url.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_NETWORK_TIMEOUTS.responseMs;
    this.ca = opts.ca ? trustedRoots(opts.ca) : undefined;
  }

  /**
   * Route `name` of the API with its path parameters and body. A route that streams text
   * (`textStream`) hands each piece to `onText` as the service passes it on and resolves when the
   * service ends the stream; it has no overall timeout (a pipeline run lasts as long as its own).
   */
  call<N extends RouteName>(
    name: N,
    ...[input]: unknown extends RouteInput<N> ? [(RouteInput<N> & CallOptions)?] : [RouteInput<N> & CallOptions]
  ): Promise<RouteAnswer<N>> {
    return this.request(routes[name], (input ?? {}) as Parts) as Promise<RouteAnswer<N>>;
  }

  /** Whether the service takes a record of `action` (a command path); the sender drops the others. */
  acceptsAnalyticsAction = (action: string) => ANALYTICS_ACTION.test(action);

  /** The token endpoint: its OAuth refusals (authorization_pending, invalid_grant...) are an answer here, not an error. */
  tokenGrant = async (body: RouteInput<'tokenGrant'>['body']): Promise<TokenGrantResult> => {
    try {
      return { token: await this.call('tokenGrant', { body: { client_id: CLI_CLIENT_ID, ...body } }) };
    } catch (err) {
      if (err instanceof ServiceError && err.status === 400 && err.oauth) return { error: err.oauth.error, description: err.message };
      throw err;
    }
  };

  private told = false;

  /** The notice, once per client. */
  private readonly slow = (waitingFor: 'connection' | 'answer') => {
    if (this.told) return;
    this.told = true;
    const [what, ms, variable] =
      waitingFor === 'connection'
        ? ['accept the connection', this.opts.connectTimeoutMs ?? this.timeoutMs, CONNECT_TIMEOUT_VARIABLE]
        : ['answer', this.timeoutMs, RESPONSE_TIMEOUT_VARIABLE];
    this.opts.notice?.(`waiting for the devtool service at ${this.base} to ${what} (up to ${formatDuration(ms)}, ${variable})`);
  };

  private async request(route: Pick<RouteSpec, 'method' | 'url' | 'textStream'>, parts: Parts): Promise<unknown> {
    const path = route.url.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(parts.params?.[name] ?? ''));
    // A stream gets its own connection, closed after it: a socket that carried a long stream is not
    // reused (the proxy may have given up on it, and the next call would meet a reset).
    const headers: Record<string, string> = route.textStream ? { accept: 'text/plain', connection: 'close' } : { accept: 'application/json' };
    if (this.opts.token) headers['authorization'] = `Bearer ${this.opts.token}`;
    if (parts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Answer;
    try {
      res = await exchange({
        method: route.method,
        url: new URL(`${this.base}${path}`),
        headers,
        ...(parts.body !== undefined ? { body: JSON.stringify(parts.body) } : {}),
        ...(this.ca ? { ca: this.ca } : {}),
        ...(parts.onText ? { onText: parts.onText } : {}),
        ...(parts.signal ? { signal: parts.signal } : {}),
        timeoutMs: this.timeoutMs,
        ...(this.opts.connectTimeoutMs !== undefined ? { connectTimeoutMs: this.opts.connectTimeoutMs } : {}),
        ...(this.opts.notice ? { onSlow: this.slow } : {}),
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.name === 'TimeoutError')
        throw new DevtoolError(
          `the devtool service at ${this.base} did not answer within ${formatDuration(this.timeoutMs)} (${RESPONSE_TIMEOUT_VARIABLE} sets the wait): ` +
            'check that it is running',
        );
      if (e.name === 'ConnectTimeoutError') {
        const text = connectTimeoutText(this.opts.connectTimeoutMs ?? 0, /TLS/.test(e.message) ? 'TLS handshake' : 'connection');
        throw new DevtoolError(`cannot reach the devtool service at ${this.base} (${text}): check that it is running and that the network to it (a VPN) is up`);
      }
      const why = e.code && UNTRUSTED_CODES.has(e.code) ? await untrustedLine(this.base, e.code) : inWords(e.code, e.message);
      throw new DevtoolError(`cannot reach the devtool service at ${this.base}: ${why}`);
    }
    const version = res.headers[SERVICE_VERSION_HEADER];
    if (typeof version === 'string' && version !== '') this.serviceVersion = version;
    const { status, text } = res;
    if (status >= 200 && status < 300) return text === '' || route.textStream ? undefined : JSON.parse(text);
    if (status >= 300 && status < 400) {
      // Never followed: the token would go to wherever the redirect points.
      throw new DevtoolError(
        `cannot reach the devtool service at ${this.base}: ${route.method} ${path} is redirected (${status}) to ${res.location ?? 'another address'}; ` +
          "use the service's own URL",
      );
    }
    const oauth = oauthErrorOf(text);
    if (status < 500 && oauth) throw new ServiceError(oauth.description, status, { error: oauth.error });
    const reason = errorOf(text);
    if (status < 500 && reason) throw new ServiceError(reason, status);
    throw new ServiceError(`the devtool service at ${this.base} failed (${status} on ${route.method} ${path})${reason ? `: ${reason}` : ''}`, status);
  }
}

/** Why a connection failed, in words a user can act on (the code stays, for searching). */
function inWords(code: string | undefined, message: string): string {
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `its host name does not resolve (${code})`;
    case 'ECONNREFUSED':
      return 'nothing listens there (ECONNREFUSED)';
    case 'ECONNRESET':
      return 'the connection was cut (ECONNRESET)';
    case 'ETIMEDOUT':
      return `no answer to the connection (${code})`;
    case 'EPROTO':
      if (/wrong version number/.test(message)) return `it does not answer in TLS there; is its URL http://? (${code})`;
      return oneLine(`${code}: ${message}`);
    case 'CERT_HAS_EXPIRED':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `its TLS certificate is not valid for it (${code})`;
    default:
      return oneLine(code ? `${code}: ${message}` : message);
  }
}

/** The one-line reason of a `{ error }` body, or undefined when the body is something else (a proxy's page). */
function errorOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === 'string' ? oneLine(body.error) : undefined;
  } catch {
    return undefined;
  }
}

/** `{ error, error_description }` of the token endpoint (RFC 6749 5.2), or undefined. */
function oauthErrorOf(text: string): { error: string; description: string } | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (typeof body.error !== 'string' || typeof body.error_description !== 'string') return undefined;
    return { error: body.error, description: oneLine(body.error_description) };
  } catch {
    return undefined;
  }
}
