/**
 * What every request of a KubeConfig made by kubeConfigFor goes through: a connect and a response
 * timeout on each socket (typed APIs, discovery, watches, exec and port-forward alike: they all get
 * their agent from the KubeConfig), and, for the typed APIs, the translation of a refusal into one
 * line (kube/answer.ts) instead of the client's multi-line exception.
 */
import type { ApiConstructor, ApiType, HttpLibrary, KubeConfig, RequestContext, ResponseContext } from '@kubernetes/client-node';
import type { Agent } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { DevtoolError } from '../base/errors.ts';
import { formatDuration } from '../base/duration.ts';
import {
  CONNECT_TIMEOUT_VARIABLE,
  connectTimeoutText,
  type NetworkTimeouts,
  RESPONSE_TIMEOUT_VARIABLE,
  responseTimeoutText,
  SLOW_MS,
} from '../base/network-timeouts.ts';
import { describeKubeAnswer, isForeignSuccess, type KubeAnswer } from './answer.ts';

/**
 * A refusal of the API server (or an answer of a server that is not one), in one line. Shaped like
 * the client's ApiException (`code`: the HTTP status, `body`: its text, `headers`), so code that
 * asks isNotFound or reads the Status body works on it unchanged.
 */
export class KubeAnswerError extends DevtoolError {
  constructor(
    message: string,
    readonly code: number,
    readonly body: string,
    readonly headers: Record<string, string>,
  ) {
    super(message);
  }
}

type KubeClientModule = typeof import('@kubernetes/client-node');

/** Tells the user, once, that a request is slow: what it waits for and how long it will. */
export type SlowNotice = (line: string) => void;

/**
 * Makes `kc` bound by `timeouts` and its typed API clients answer refusals in one line. `notice`
 * hears, once, of a connection or an answer slower than a few seconds.
 */
export function boundKubeConfig(k8s: KubeClientModule, kc: KubeConfig, timeouts: NetworkTimeouts, context: KubeAnswer['context'], notice?: SlowNotice): void {
  // createAgent is private in the typings; every request's agent comes from it.
  const internals = kc as unknown as { createAgent(cluster: { server?: string } | null, options: unknown): Agent };
  const createAgent = internals.createAgent.bind(kc);
  let told = false;
  const once: SlowNotice = (line) => {
    if (told) return;
    told = true;
    notice?.(line);
  };
  internals.createAgent = (cluster, options) =>
    boundAgent(
      createAgent(cluster, options),
      timeouts,
      notice ? { what: `the Kubernetes API server ${cluster?.server ?? ''}`.trim(), notice: once } : undefined,
    );
  const httpApi = checkedHttpLibrary(k8s, new k8s.IsomorphicFetchHttpLibrary(), context);
  // As KubeConfig.makeApiClient, with the checked library.
  kc.makeApiClient = <T extends ApiType>(type: ApiConstructor<T>): T => {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new DevtoolError(`context "${context.name}" has no cluster`);
    return new type(k8s.createConfiguration({ baseServer: new k8s.ServerConfiguration(cluster.server, {}), authMethods: { default: kc }, httpApi }));
  };
}

/** Who is slow, and who to tell. */
export interface Slowness {
  what: string;
  notice: SlowNotice;
}

/** An agent whose every socket is bound by the timeouts. */
export function boundAgent<A extends Agent>(agent: A, timeouts: NetworkTimeouts, slow?: Slowness): A {
  const connection = agent as unknown as { createConnection(options: unknown, callback: unknown): Socket | undefined };
  const create = connection.createConnection;
  connection.createConnection = function (this: A, options: unknown, callback: unknown) {
    const socket = create.call(this, options, callback);
    // A proxy's agent hands its socket over later, through the callback: only its answer is bounded then (by the caller).
    if (socket) boundSocket(socket, timeouts, slow);
    return socket;
  };
  return agent;
}

/**
 * Destroys `socket` when it is not connected (TLS handshake included) within the connect timeout,
 * or when no byte of an answer follows within the response timeout. After the first byte the
 * request runs as long as it runs: a watch, a log stream, an exec.
 */
export function boundSocket(socket: Socket, t: NetworkTimeouts, slow?: Slowness): void {
  const tls = (socket as { encrypted?: boolean }).encrypted === true;
  let tcpConnected = !socket.connecting;
  const fail = (text: string) => socket.destroy(Object.assign(new Error(text), { code: 'ETIMEDOUT' }));
  // Two timers at a time: the one that fails the socket, and the one that tells the user it is slow.
  let timer = setTimeout(() => fail(connectTimeoutText(t.connectMs, tcpConnected && tls ? 'TLS handshake' : 'connection')), t.connectMs).unref();
  let slowTimer = slowAfter(
    t.connectMs,
    slow,
    () => `waiting for ${slow!.what} to accept the connection (up to ${formatDuration(t.connectMs)}, ${CONNECT_TIMEOUT_VARIABLE})`,
  );
  const stop = () => {
    clearTimeout(timer);
    clearTimeout(slowTimer);
  };
  const connected = () => {
    stop();
    timer = setTimeout(() => fail(responseTimeoutText(t.responseMs)), t.responseMs).unref();
    slowTimer = slowAfter(
      t.responseMs,
      slow,
      () => `waiting for ${slow!.what} to answer (up to ${formatDuration(t.responseMs)}, ${RESPONSE_TIMEOUT_VARIABLE})`,
    );
    socket.once('data', stop);
  };
  socket.once('connect', () => {
    tcpConnected = true;
  });
  if (!socket.connecting && !tls) connected();
  else socket.once(tls ? 'secureConnect' : 'connect', connected);
  socket.once('close', stop);
}

function slowAfter(limitMs: number, slow: Slowness | undefined, line: () => string): NodeJS.Timeout | undefined {
  if (!slow || limitMs <= SLOW_MS) return undefined;
  return setTimeout(() => slow.notice(line()), SLOW_MS).unref();
}

/** The client's own library, with every refusal (and a foreign server's answer) turned into a KubeAnswerError. */
function checkedHttpLibrary(k8s: KubeClientModule, inner: HttpLibrary, context: KubeAnswer['context']): HttpLibrary {
  return k8s.wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      const response = await inner.send(request).toPromise();
      const status = response.httpStatusCode;
      const contentType = response.headers['content-type'] ?? '';
      if (status < 400 && !isForeignSuccess({ contentType })) return response;
      const body = await response.body.text().catch(() => '');
      const answer = { method: request.getHttpMethod(), url: request.getUrl(), status, statusText: STATUS_CODES[status] ?? '', contentType, body, context };
      throw new KubeAnswerError(describeKubeAnswer(answer), status, body, response.headers);
    },
  });
}
