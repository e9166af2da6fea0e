/**
 * One HTTP exchange of the service's client, over node:http and node:https. Not Node's global
 * fetch: its library (undici) loads on the first call, ~80 ms of a short command, and its
 * keep-alive pool held the process ~100 ms more before it could exit. The built-in agents keep
 * connections alive too (Node 20), but an idle pooled socket does not hold the process.
 * No proxy: like the fetch this replaces (Node 20's ignores HTTP(S)_PROXY), requests go direct.
 */
import type { IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import { SLOW_MS } from '../base/network-timeouts.ts';

export interface Exchange {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** The CAs an https: URL is checked against, instead of Node's own list (tls.ts: the system's plus the user's). */
  ca?: readonly string[];
  /** The whole exchange, from the name lookup to the body's last byte. */
  timeoutMs: number;
  /** From the request to a connected socket (TLS handshake done); absent, only `timeoutMs` bounds it. */
  connectTimeoutMs?: number;
  /** Told, once, when the connection or the answer is slower than SLOW_MS: what the exchange waits for. */
  onSlow?: (waitingFor: 'connection' | 'answer') => void;
  /**
   * A streamed answer (a pipeline's log): each piece of a 2xx body goes here as it arrives, and the
   * timeout covers only the wait for the answer to begin. A connection cut during the stream ends
   * it like its end (the caller asks how the run went).
   */
  onText?: (text: string) => void;
  /** Ends the exchange when it aborts (a stream then ends as if cut). */
  signal?: AbortSignal;
}

export interface Answer {
  status: number;
  /** Where a redirect points (the client follows none). */
  location?: string;
  /** The answer's headers, names in lower case; none when the connection closed before an answer. */
  headers: IncomingHttpHeaders;
  text: string;
}

/** The service did not answer in time. */
export class ExchangeTimeout extends Error {
  override name = 'TimeoutError';
}

/** No connection to the service in time (a VPN that is down, a firewall that drops packets). */
export class ConnectTimeout extends Error {
  override name = 'ConnectTimeoutError';
}

/**
 * Sends one request and reads its whole answer. A connection failure rejects with Node's error
 * (its `code`: ECONNREFUSED, ENOTFOUND, SELF_SIGNED_CERT_IN_CHAIN...); no answer in time, with an
 * ExchangeTimeout.
 */
export async function exchange(x: Exchange): Promise<Answer> {
  try {
    return await once(x);
  } catch (err) {
    // A kept-alive connection the server closed as this request went out: sent again, once, on a
    // new one (Node's documented pattern), if sending it twice does no harm; a POST is not.
    const stale = (err as { reusedSocket?: boolean }).reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET';
    if (stale && IDEMPOTENT.has(x.method)) return once(x);
    throw err;
  }
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

function once(x: Exchange): Promise<Answer> {
  const https = x.url.protocol === 'https:';
  const { request } = https ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
  const headers = x.body === undefined ? x.headers : { ...x.headers, 'content-length': String(Buffer.byteLength(x.body)) };
  const options: RequestOptions & { ca?: string[] } = { method: x.method, headers, ...(https && x.ca ? { ca: [...x.ca] } : {}) };
  return new Promise<Answer>((resolve, reject) => {
    let answer: IncomingMessage | undefined;
    const timer = setTimeout(() => {
      const err = new ExchangeTimeout(`no answer within ${x.timeoutMs} ms`);
      req.destroy(err);
      answer?.destroy(err);
    }, x.timeoutMs);
    let tcpConnected = false;
    const connectTimer =
      x.connectTimeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            const stage = tcpConnected && https ? 'TLS handshake' : 'connection';
            req.destroy(new ConnectTimeout(`no ${stage} within ${x.connectTimeoutMs} ms`));
          }, x.connectTimeoutMs);
    let slowTimer = x.onSlow ? setTimeout(() => x.onSlow!('connection'), SLOW_MS) : undefined;
    const connected = () => {
      clearTimeout(connectTimer);
      clearTimeout(slowTimer);
      if (x.onSlow && answer === undefined) slowTimer = setTimeout(() => x.onSlow!('answer'), SLOW_MS);
    };
    let streaming = false;
    let text = '';
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(connectTimer);
      clearTimeout(slowTimer);
      const location = answer?.headers.location;
      resolve({ status: answer?.statusCode ?? 502, headers: answer?.headers ?? {}, text, ...(location ? { location } : {}) });
    };
    const fail = (err: Error) => {
      if (streaming) return finish();
      clearTimeout(timer);
      clearTimeout(connectTimer);
      clearTimeout(slowTimer);
      reject(Object.assign(err, { reusedSocket: req.reusedSocket && answer === undefined }));
    };
    const req = request(x.url, options, (res) => {
      answer = res;
      clearTimeout(slowTimer);
      const status = res.statusCode ?? 502;
      streaming = x.onText !== undefined && status >= 200 && status < 300;
      if (streaming) clearTimeout(timer);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (streaming) x.onText!(chunk);
        else text += chunk;
      });
      res.on('error', fail);
      res.on('end', finish);
      // Cut mid-stream: no 'end' comes.
      if (streaming) res.on('close', finish);
    });
    req.on('error', fail);
    req.on('socket', (socket) => {
      // A kept-alive socket is connected already.
      if (!socket.connecting) return connected();
      socket.once('connect', () => {
        tcpConnected = true;
      });
      socket.once(https ? 'secureConnect' : 'connect', connected);
    });
    x.signal?.addEventListener(
      'abort',
      () => {
        const err = new Error('aborted');
        req.destroy(err);
        answer?.destroy(err);
      },
      { once: true },
    );
    req.end(x.body);
  });
}
