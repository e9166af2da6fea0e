/**
 * Hosted builds: the tunnel from a user's BuildKit client to the cluster's BuildKit daemon.
 *
 * The daemon (the chart's builder) is never exposed: the CLI sends `GET /api/v1/builds/tunnel`
 * with `Connection: Upgrade`, `Upgrade: devtool-buildkit` and its API token; the service checks the
 * token like any route's, dials the builder (mutual TLS with the chart's client certificate: only
 * the service may talk to it), names the user it authenticated in one preface line (the builder's
 * gateway runs each user's builds on that user's own daemon), answers 101 and from then on copies
 * bytes both ways. The CLI hands a
 * loopback listener to BuildKit's client, so what flows is BuildKit's own gRPC, session included
 * (build context, `--secret` values, registry credentials): the service never parses it, never
 * logs it, never stores it. Users need no Kubernetes rights for this (no pods/portforward).
 *
 * Fastify does not route upgrades: Node hands every request with an Upgrade header to the
 * server's 'upgrade' listener, attached here; a plain GET of the same path is the contract route
 * (routes/builds.ts), which answers 426.
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { isDnsLabel } from '../api/dns-label.ts';
import { BUILD_TUNNEL_PROTOCOL, routes } from '../api/routes.ts';
import { authenticate } from './auth.ts';
import type { App, ServiceDeps } from './service-deps.ts';
import { ApiError, oneLine } from './errors.ts';

/** Where the chart's BuildKit daemon listens, and the client certificate it requires. */
export interface BuildkitUpstream {
  host: string;
  port: number;
  /** Mutual TLS: the daemon's CA, and the service's client certificate and key (PEM). Absent: plain TCP. */
  tls?: { ca: string; cert: string; key: string; servername: string };
}

/**
 * The line the builder's gateway reads before the client's bytes (buildkit/gateway): the tenant
 * whose daemon serves the connection. Only the service writes it, from the authenticated user, so
 * a user's client can never pick another user's daemon: a preface of its own would follow this one
 * and reach the daemon as (broken) gRPC.
 */
export function tenantPreface(userName: string): string {
  if (!isDnsLabel(userName)) throw new Error(`"${userName}" cannot name a build tenant`);
  return `devtool-tenant ${userName}\n`;
}

/** How long dialing the daemon may take before the tunnel is refused with 502. */
export const UPSTREAM_DIAL_MS = 10_000;
// A build's connection may stay quiet between steps; TCP keepalive notices a vanished peer
// (the CLI's gRPC keepalive, DEVTOOL_KEEPALIVE_CLIENT_*, passes through the tunnel end to end).
const TCP_KEEPALIVE_MS = 30_000;

/** The 4xx/5xx of an upgrade request, written on the raw socket: `{ error }` on one line, like every route. */
function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: oneLine(message) });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Dials the daemon; resolves once the TLS handshake (or the TCP connect) is done. */
export function dialUpstream(up: BuildkitUpstream, timeoutMs = UPSTREAM_DIAL_MS): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket: Socket = up.tls
      ? tlsConnect({ host: up.host, port: up.port, ca: up.tls.ca, cert: up.tls.cert, key: up.tls.key, servername: up.tls.servername, ALPNProtocols: ['h2'] })
      : netConnect({ host: up.host, port: up.port });
    const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    const done = (err?: Error) => {
      clearTimeout(timer);
      socket.off('error', done);
      if (err) reject(err);
      else resolve(socket);
    };
    socket.once('error', done);
    socket.once(up.tls ? 'secureConnect' : 'connect', () => done());
  });
}

/** Attaches the upgrade handler; tunnels still open when the app closes are cut. */
export function attachBuildTunnel(app: App, ctx: ServiceDeps, upstream: BuildkitUpstream | undefined): void {
  const open = new Set<Duplex>();
  app.addHook('preClose', async () => {
    for (const s of open) s.destroy();
  });
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {}); // a client that goes away mid-handshake is not the service's failure
    tunnel(request, socket, head).catch((err: unknown) => {
      if (err instanceof ApiError) return refuse(socket, err.statusCode, err.message);
      app.log.error({ err }, 'build tunnel failed');
      refuse(socket, 500, 'internal error of the devtool service; its log has the details');
    });
  });

  async function tunnel(request: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    if (path !== routes.buildTunnel.url) throw new ApiError(404, `no upgrade route ${path}`);
    const protocol = String(request.headers.upgrade ?? '').toLowerCase();
    if (protocol !== BUILD_TUNNEL_PROTOCOL) throw new ApiError(400, `unsupported Upgrade "${protocol}": expected ${BUILD_TUNNEL_PROTOCOL}`);
    if (request.method !== 'GET') throw new ApiError(405, `${request.method} ${path}: expected GET`);
    const user = await authenticate(ctx, request.headers.authorization, `https://${request.headers.host ?? 'the service'}`);
    if (!upstream) throw new ApiError(503, 'this devtool service has no builder: install the chart with builder.enabled=true, or build with BUILDKIT_HOST');
    let daemon: Socket;
    try {
      daemon = await dialUpstream(upstream);
    } catch (err) {
      app.log.warn({ user: user.name, err: (err as Error).message }, 'build tunnel: the BuildKit daemon cannot be reached');
      throw new ApiError(502, `the cluster's BuildKit daemon cannot be reached: ${(err as Error).message}`);
    }
    if (client.destroyed) return void daemon.destroy();
    const started = Date.now();
    let sent = 0;
    let received = 0;
    client.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${BUILD_TUNNEL_PROTOCOL}\r\n\r\n`);
    for (const s of [client as Socket, daemon]) {
      s.setNoDelay?.(true);
      s.setKeepAlive?.(true, TCP_KEEPALIVE_MS);
    }
    daemon.write(tenantPreface(user.name));
    if (head.length > 0) daemon.write(head);
    open.add(client);
    client.on('data', (chunk: Buffer) => {
      sent += chunk.length;
    });
    daemon.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    client.pipe(daemon);
    daemon.pipe(client);
    // Sizes and times only: the bytes are the user's build (its context, its secrets).
    app.log.info({ user: user.name }, 'build tunnel opened');
    let closed = false;
    const close = (why: string) => {
      if (closed) return;
      closed = true;
      open.delete(client);
      client.destroy();
      daemon.destroy();
      app.log.info({ user: user.name, sentBytes: sent, receivedBytes: received, ms: Date.now() - started, end: why }, 'build tunnel closed');
    };
    client.on('close', () => close('client'));
    daemon.on('close', () => close('daemon'));
    client.on('error', () => close('client error'));
    daemon.on('error', () => close('daemon error'));
  }
}
