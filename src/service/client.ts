/**
 * The CLI's client of the devtool service: one method per route of the contract (contract.ts), over
 * Node's fetch, each call bounded by a timeout. A refusal (4xx) becomes a DevtoolError whose message
 * is the service's one-line reason; an unreachable or failing service, one line saying so.
 */
import { DevtoolError } from '../base/errors.ts';
import {
  type AnalyticsAcceptedBody,
  type AnalyticsRecordBody,
  CLI_CLIENT_ID,
  type DeviceCodeAnswerBody,
  type InfoBody,
  type KubeCredentialsBody,
  type MeBody,
  type NamespaceBody,
  type NamespaceListBody,
  type PipelineDeployBody,
  type PipelineDestroyBody,
  type PipelineRunBody,
  type RouteSpec,
  routes,
  type SecretListBody,
  type SecretValuesBody,
  type TokenCreateBody,
  type TokenCreatedBody,
  type TokenGrantAnswerBody,
  type TokenGrantRequestBody,
  type TokenListBody,
  ANALYTICS_ACTION_PATTERN,
} from './contract.ts';

const ANALYTICS_ACTION = new RegExp(ANALYTICS_ACTION_PATTERN);
import { fetchTrusting, UNTRUSTED_CODES, untrustedLine } from './tls.ts';

export { trustedCas } from './tls.ts';

/** The token endpoint's answer: a token, or the OAuth error code the caller acts on (RFC 6749 5.2). */
export type TokenGrantResult = { token: TokenGrantAnswerBody } | { error: string; description: string };

export interface ServiceClientOptions {
  /** The service URL, e.g. https://devtool.example (normalizeServiceUrl). */
  url: string;
  token?: string;
  /** Per call; default 15 s. */
  timeoutMs?: number;
  /** For tests: another fetch. */
  fetch?: typeof fetch;
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
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly doFetch: typeof fetch;

  constructor(private readonly opts: ServiceClientOptions) {
    this.base = opts.url.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.doFetch = opts.fetch ?? (opts.ca ? fetchTrusting(opts.ca) : fetch);
  }

  info = () => this.call<InfoBody>(routes.info);
  me = () => this.call<MeBody>(routes.me);
  createToken = (body: TokenCreateBody) => this.call<TokenCreatedBody>(routes.createToken, { body });
  listTokens = () => this.call<TokenListBody>(routes.listTokens);
  revokeToken = (id: string) => this.call<void>(routes.revokeToken, { params: { id } });
  listNamespaces = () => this.call<NamespaceListBody>(routes.listNamespaces);
  createNamespace = (name: string) => this.call<NamespaceBody>(routes.createNamespace, { body: { name } });
  deleteNamespace = (name: string) => this.call<void>(routes.deleteNamespace, { params: { name } });
  listSecrets = () => this.call<SecretListBody>(routes.listSecrets);
  putSecret = (name: string, value: string) => this.call<void>(routes.putSecret, { params: { name }, body: { value } });
  deleteSecret = (name: string) => this.call<void>(routes.deleteSecret, { params: { name } });
  secretValues = () => this.call<SecretValuesBody>(routes.secretValues);
  sendAnalytics = (records: AnalyticsRecordBody[]) => this.call<AnalyticsAcceptedBody>(routes.sendAnalytics, { body: { records } });
  /** Whether the service takes a record of `action` (a command path); the sender drops the others. */
  acceptsAnalyticsAction = (action: string) => ANALYTICS_ACTION.test(action);
  // login (browser, device code, pages)
  deviceCode = (machine: string) => this.call<DeviceCodeAnswerBody>(routes.deviceCode, { body: { client_id: CLI_CLIENT_ID, machine } });
  /** The OAuth refusals (authorization_pending, invalid_grant...) are an answer here, not an error. */
  tokenGrant = async (body: TokenGrantRequestBody): Promise<TokenGrantResult> => {
    try {
      return { token: await this.call<TokenGrantAnswerBody>(routes.tokenGrant, { body: { client_id: CLI_CLIENT_ID, ...body } }) };
    } catch (err) {
      if (err instanceof ServiceError && err.status === 400 && err.oauth) return { error: err.oauth.error, description: err.message };
      throw err;
    }
  };
  kubeCredentials = () => this.call<KubeCredentialsBody>(routes.kubeCredentials);
  // pipelines
  deployPipeline = (body: PipelineDeployBody) => this.call<PipelineRunBody>(routes.deployPipeline, { body });
  destroyPipeline = (namespace: string, name: string, body: PipelineDestroyBody) =>
    this.call<PipelineRunBody>(routes.destroyPipeline, { params: { namespace, name }, body });
  getPipeline = (namespace: string, name: string) => this.call<PipelineRunBody>(routes.getPipeline, { params: { namespace, name } });
  /**
   * The run's output as it comes: `onText` gets each piece as the service passes it on; resolves
   * when the service ends the stream (the runner ended, or the connection was cut: the caller asks
   * getPipeline). No overall timeout: a run lasts as long as its own --timeout.
   */
  pipelineLog = async (namespace: string, name: string, onText: (text: string) => void, signal?: AbortSignal): Promise<void> => {
    const path = routes.pipelineLog.url.replace(':namespace', encodeURIComponent(namespace)).replace(':name', encodeURIComponent(name));
    // Its own connection, closed after it: a socket that carried a long stream is not reused (the
    // proxy may have given up on it, and the next call would meet a reset).
    const headers: Record<string, string> = { accept: 'text/plain', connection: 'close' };
    if (this.opts.token) headers['authorization'] = `Bearer ${this.opts.token}`;
    let res: Response;
    try {
      res = await this.doFetch(`${this.base}${path}`, { headers, redirect: 'error', ...(signal ? { signal } : {}) });
    } catch (err) {
      throw new DevtoolError(`cannot reach the devtool service at ${this.base}: ${inWords(undefined, (err as Error).message)}`);
    }
    if (!res.ok) {
      const reason = errorOf(await res.text());
      throw new ServiceError(reason ?? `the devtool service at ${this.base} failed (${res.status} on GET ${path})`, res.status);
    }
    if (!res.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) onText(decoder.decode(chunk, { stream: true }));
    } catch {
      // A cut connection (a service pod stopping) ends the stream like its end: the caller checks the status.
    }
    const rest = decoder.decode();
    if (rest) onText(rest);
  };

  private async call<T>(route: RouteSpec, parts: { params?: Record<string, string>; body?: unknown } = {}): Promise<T> {
    const path = route.url.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(parts.params?.[name] ?? ''));
    const url = `${this.base}${path}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.token) headers['authorization'] = `Bearer ${this.opts.token}`;
    if (parts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await this.doFetch(url, {
        method: route.method,
        headers,
        ...(parts.body !== undefined ? { body: JSON.stringify(parts.body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
      text = await res.text();
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      if (e.name === 'TimeoutError') throw new DevtoolError(`the devtool service at ${this.base} did not answer within ${this.timeoutMs / 1000} s`);
      const code = e.cause?.code;
      const why = code && UNTRUSTED_CODES.has(code) ? await untrustedLine(this.base, code) : inWords(code, e.cause?.message ?? e.message);
      throw new DevtoolError(`cannot reach the devtool service at ${this.base}: ${why}`);
    }
    if (res.ok) return (text === '' ? undefined : JSON.parse(text)) as T;
    const oauth = oauthErrorOf(text);
    if (res.status < 500 && oauth) throw new ServiceError(oauth.description, res.status, { error: oauth.error });
    const reason = errorOf(text);
    if (res.status < 500 && reason) throw new ServiceError(reason, res.status);
    throw new ServiceError(`the devtool service at ${this.base} failed (${res.status} on ${route.method} ${path})${reason ? `: ${reason}` : ''}`, res.status);
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
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `no answer to the connection (${code})`;
    case 'CERT_HAS_EXPIRED':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `its TLS certificate is not valid for it (${code})`;
    default:
      return (code ? `${code}: ${message}` : message).replace(/\s*[\r\n]+\s*/g, ' ');
  }
}

/** The one-line reason of a `{ error }` body, or undefined when the body is something else (a proxy's page). */
function errorOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === 'string' ? body.error.replace(/\s*[\r\n]+\s*/g, ' ').trim() : undefined;
  } catch {
    return undefined;
  }
}

/** `{ error, error_description }` of the token endpoint (RFC 6749 5.2), or undefined. */
function oauthErrorOf(text: string): { error: string; description: string } | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (typeof body.error !== 'string' || typeof body.error_description !== 'string') return undefined;
    return { error: body.error, description: body.error_description.replace(/\s*[\r\n]+\s*/g, ' ').trim() };
  } catch {
    return undefined;
  }
}
