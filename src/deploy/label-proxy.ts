/**
 * The labelling proxy, as Okteto runs one: deploy commands (kubectl, helm, scripts) get a
 * kubeconfig pointing here instead of at the API server, and every namespaced object they create
 * or update is given the environment label on the way through, so `destroy` can find it. It
 * listens on 127.0.0.1 only, on a random port, and refuses any request without its random token;
 * upstream, it uses the context's own credentials (KubeConfig.applyToHTTPSOptions).
 * Everything else (reads, watches, logs, and exec/attach/port-forward upgrades) is streamed
 * through unchanged.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { DevtoolError } from '../base/errors.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import { isNamespacedWrite, labelBody, labelledBodyFormat } from './labels-inject.ts';

export interface LabelProxy {
  readonly url: string;
  readonly token: string;
  /** A kubeconfig file for the commands: this proxy, the token, the namespace. */
  readonly kubeconfigPath: string;
  /** Requests whose object could not be labelled (JSON patches, CBOR...), for a warning. */
  readonly unlabelled: string[];
  close(): Promise<void>;
}

/** Headers that describe one connection, never forwarded (RFC 9110 7.6.1), plus our own credentials. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
  'authorization',
  'content-length',
]);
const MAX_BODY = 32 * 1024 * 1024;

export async function startLabelProxy(kc: KubeConfig, opts: { environment: string; namespace: string; contextName: string }): Promise<LabelProxy> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new DevtoolError(`context "${opts.contextName}" has no cluster`);
  const upstream = new URL(cluster.server);
  const token = randomBytes(32).toString('hex');
  const unlabelled: string[] = [];

  /**
   * The token comes as a bearer token, or as the first segment of the path: client-go (kubectl,
   * helm) never sends a bearer token to a plain-HTTP server, so the kubeconfig's server URL carries
   * it (http://127.0.0.1:PORT/TOKEN). A request with the path form has the prefix removed here.
   */
  const prefix = `/${token}`;
  const authorized = (req: IncomingMessage): boolean => {
    const url = req.url ?? '/';
    if (url.startsWith(`${prefix}/`) || url === prefix || url.startsWith(`${prefix}?`)) {
      const rest = url.slice(prefix.length);
      req.url = rest.startsWith('/') ? rest : `/${rest}`;
      return true;
    }
    const given = Buffer.from(req.headers.authorization ?? '');
    const wanted = Buffer.from(`Bearer ${token}`);
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  };

  /** Request options for the API server: the client's headers, the context's credentials. */
  const upstreamOptions = async (req: IncomingMessage, extra: OutgoingHttpHeaders = {}): Promise<RequestOptions> => {
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
    const options: RequestOptions = { method: req.method!, headers: { ...headers, ...extra } };
    await kc.applyToHTTPSOptions(options);
    return options;
  };
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!authorized(req)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'devtool proxy: missing or wrong token',
          reason: 'Unauthorized',
          code: 401,
        }),
      );
      return;
    }
    const target = upstreamUrl(upstream, req.url ?? '/');
    if (typeof target === 'string') {
      res.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: `devtool proxy: refused: ${target}`,
          reason: 'BadRequest',
          code: 400,
        }),
      );
      return;
    }
    const format = labelledBodyFormat(req.method ?? 'GET', req.url ?? '/', req.headers['content-type']);
    let body: Buffer | undefined;
    // A write this proxy cannot read (JSON patch, CBOR): forwarded as sent, and reported.
    if (!format && isNamespacedWrite(req.method ?? 'GET', req.url ?? '/'))
      unlabelled.push(`${req.method} ${req.url?.split('?')[0]} (${req.headers['content-type'] ?? 'no content type'})`);
    if (format) {
      const raw = await readBody(req);
      // The protobuf reader (~140 KB) is loaded only when kubectl sends protobuf.
      const labelled =
        format === 'protobuf'
          ? (await import('./labels-protobuf.ts')).labelProtobufBody(raw, opts.environment)
          : labelBody(raw.toString('utf8'), format, opts.environment, parseYaml);
      if (labelled === undefined) unlabelled.push(`${req.method} ${req.url}`);
      body = labelled === undefined ? raw : Buffer.from(labelled);
    }
    const extra: OutgoingHttpHeaders = body
      ? { 'content-length': String(body.length) }
      : req.headers['content-length']
        ? { 'content-length': req.headers['content-length'] }
        : {};
    if (!body && req.headers['transfer-encoding']) extra['transfer-encoding'] = req.headers['transfer-encoding'];
    const up = send(target, await upstreamOptions(req, extra), (upRes) => {
      const headers: OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(upRes.headers)) if (k !== 'connection' && k !== 'keep-alive' && v !== undefined) headers[k] = v;
      res.writeHead(upRes.statusCode ?? 502, headers);
      // Streamed, never buffered: watches and `logs -f` stay open as long as the client wants.
      upRes.pipe(res);
    });
    up.on('error', (err) => fail(res, err));
    res.on('close', () => up.destroy());
    if (body) up.end(body);
    else req.pipe(up);
  };

  /** exec, attach and port-forward upgrade the connection (SPDY or WebSocket): bytes go both ways unchanged. */
  const upgrade = async (req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> => {
    if (!authorized(req)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const target = upstreamUrl(upstream, req.url ?? '/');
    if (typeof target === 'string') {
      const reason = `devtool proxy: refused: ${target}\n`;
      socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(reason)}\r\nconnection: close\r\n\r\n${reason}`);
      return;
    }
    const options = await upstreamOptions(req, { connection: 'Upgrade', upgrade: req.headers.upgrade ?? '' });
    const up = send(target, options);
    up.on('upgrade', (upRes, upSocket, upHead) => {
      const lines = [`HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}`];
      for (let i = 0; i < upRes.rawHeaders.length; i += 2) lines.push(`${upRes.rawHeaders[i]}: ${upRes.rawHeaders[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      upSocket.pipe(socket).pipe(upSocket);
      upSocket.on('error', () => socket.destroy());
      socket.on('error', () => upSocket.destroy());
    });
    // The API server answered without upgrading (403, 404...): pass its answer on and close.
    up.on('response', (upRes) => {
      const lines = [`HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}`];
      for (let i = 0; i < upRes.rawHeaders.length; i += 2)
        if (!/^(connection|transfer-encoding)$/i.test(upRes.rawHeaders[i]!)) lines.push(`${upRes.rawHeaders[i]}: ${upRes.rawHeaders[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\nconnection: close\r\n\r\n`);
      upRes.pipe(socket);
    });
    up.on('error', () => socket.destroy());
    up.end();
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => fail(res, err));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    upgrade(req, socket, head).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const dir = mkdtempSync(join(tmpdir(), 'devtool-deploy-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileAtomic(kubeconfigPath, proxyKubeconfig(url, token, opts.contextName, opts.namespace), 0o600);

  return {
    url,
    token,
    kubeconfigPath,
    unlabelled,
    close: async () => {
      rmSync(dir, { recursive: true, force: true });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Where a request goes: the API server's origin and path, then the request's path. The server's
 * path is kept because gateways serve a cluster under a prefix (Rancher:
 * https://rancher.example/k8s/clusters/c-abc). Only a path starting with a single "/" is taken:
 * "//host/x" or "http://host/x" would otherwise name another server, which would then receive the
 * user's credentials. Dot segments may not climb out of the server's path either. Returns the
 * reason when the request is refused.
 */
export function upstreamUrl(upstream: URL, requestPath: string): URL | string {
  // WHATWG URLs read a backslash as "/" in http(s) paths: "/\host" would be "//host".
  if (!/^\/(?![/\\])/.test(requestPath)) return `the request path must start with a single "/", not ${JSON.stringify(requestPath.slice(0, 100))}`;
  const base = upstream.pathname.replace(/\/+$/, '');
  const url = new URL(`${upstream.origin}${base}${requestPath}`);
  if (url.origin !== upstream.origin || !(url.pathname === base || url.pathname.startsWith(`${base}/`))) {
    return `the request path ${JSON.stringify(requestPath.slice(0, 100))} leaves the API server's path ${JSON.stringify(base || '/')}`;
  }
  return url;
}

/** The kubeconfig the commands get: one context, named like the real one, on the proxy. */
export function proxyKubeconfig(url: string, token: string, contextName: string, namespace: string): string {
  return `${JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'devtool-proxy', cluster: { server: `${url}/${token}` } }],
      users: [{ name: 'devtool-proxy', user: { token } }],
      contexts: [{ name: contextName, context: { cluster: 'devtool-proxy', user: 'devtool-proxy', namespace } }],
      'current-context': contextName,
    },
    null,
    2,
  )}\n`;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy(new Error(`request body over ${MAX_BODY} bytes`));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function fail(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const message = `devtool proxy: cannot reach the API server: ${(err as Error).message}`;
  res
    .writeHead(502, { 'content-type': 'application/json' })
    .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason: 'ServiceUnavailable', code: 502 }));
}
