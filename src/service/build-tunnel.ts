/**
 * The CLI's end of the hosted build tunnel (API contract route buildTunnel, server/build-tunnel.ts): a
 * local listener whose every connection becomes an HTTP upgrade to the service with the user's API
 * token, after which bytes flow to and from the cluster's BuildKit daemon. BuildKit's client
 * (devtool-buildkit) is pointed at `unix:///<dir>/buildkit.sock` and speaks its gRPC as to any
 * daemon, so its keepalive (DEVTOOL_KEEPALIVE_CLIENT_*) and its session (context, secrets,
 * registry credentials) travel end to end and the service only copies bytes.
 *
 * The listener is a unix socket in a fresh directory only this user may enter (0700): a loopback
 * TCP port would let any local user or process build, and read what others' builds pull and push,
 * with this user's token while a build runs. The directory and socket go when the tunnel closes.
 * On Windows, where Node cannot listen on a unix socket, it is a named pipe of a random name
 * (`npipe:////./pipe/devtool-build-XXXXXX`), which only its creator and administrators may write.
 */
import { oneLine } from '../base/text.ts';
import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { DevtoolError } from '../base/errors.ts';
import { privateEndpoint } from '../base/platform.ts';
import { BUILD_TUNNEL_PROTOCOL, routes } from '../../api/routes.ts';

export interface BuildTunnelOptions {
  /** The service URL (a service context's name). */
  url: string;
  token: string;
  /** PEM of CAs to trust besides the system's (trustedCas()). */
  ca?: string;
  /** For one upgrade; default 15 s. */
  timeoutMs?: number;
}

/** A refused or failed upgrade: the service's one-line reason, and its status (0: no answer). */
export class BuildTunnelError extends DevtoolError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** One upgraded connection to the service, or a BuildTunnelError naming why not. */
export function upgrade(opts: BuildTunnelOptions): Promise<Socket> {
  const base = opts.url.replace(/\/+$/, '');
  const url = new URL(`${base}${routes.buildTunnel.url}`);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  return new Promise((resolve, reject) => {
    const headers = { connection: 'Upgrade', upgrade: BUILD_TUNNEL_PROTOCOL, authorization: `Bearer ${opts.token}` };
    let req: ClientRequest;
    if (url.protocol === 'https:') {
      req = httpsRequest(url, { method: 'GET', headers, agent: false, ...(opts.ca ? { ca: [...rootCertificates, opts.ca] } : {}) });
    } else {
      req = httpRequest(url, { method: 'GET', headers, agent: false });
    }
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on('upgrade', (_res: IncomingMessage, socket: Socket, head: Buffer) => {
      clearTimeout(timer);
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        reject(
          new BuildTunnelError(`the devtool service at ${base} refused the build tunnel: ${reasonOf(Buffer.concat(chunks).toString('utf8'), status)}`, status),
        );
      });
    });
    req.on('error', (err: Error & { code?: string }) => {
      clearTimeout(timer);
      reject(
        new BuildTunnelError(
          `cannot reach the devtool service at ${base} for a build: ${err.code ? `${err.code}: ` : ''}${err.message}`.replace(/\s*\n\s*/g, ' '),
          0,
        ),
      );
    });
    req.end();
  });
}

function reasonOf(text: string, status: number): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return oneLine(body.error);
  } catch {}
  return `HTTP ${status}`;
}

/** The local side: `address` is what BuildKit's client dials (`unix:///...`). */
export interface BuildTunnel {
  readonly address: string;
  /** Why the last upgrade failed, when one did after the first (the build's error says this instead). */
  readonly failure: BuildTunnelError | undefined;
  /**
   * How many connections the far side cut while BuildKit's client still used them (the front door
   * reloading its configuration closes upgraded connections; a service replica stopping): a build
   * that failed after one was cut, not because of the build.
   */
  readonly cuts: number;
  close(): Promise<void>;
}

/**
 * Opens the loopback listener after one upgrade went through (a refused token or a service without
 * a builder fails here, in one line, before anything is built); that first connection serves the
 * first local one, later ones each open their own.
 */
export async function openBuildTunnel(opts: BuildTunnelOptions): Promise<BuildTunnel> {
  let spare: Socket | undefined = await upgrade(opts);
  spare.on('error', () => {});
  let failure: BuildTunnelError | undefined;
  let cuts = 0;
  const live = new Set<Socket>();
  const server: Server = createServer((local) => {
    live.add(local);
    local.on('close', () => live.delete(local));
    local.on('error', () => {});
    const next = spare && !spare.destroyed ? Promise.resolve(spare) : upgrade(opts);
    spare = undefined;
    next.then(
      (remote) => {
        live.add(remote);
        remote.on('close', () => {
          live.delete(remote);
          if (!local.destroyed) cuts++;
          local.destroy();
        });
        local.on('close', () => remote.destroy());
        remote.on('error', () => local.destroy());
        local.pipe(remote);
        remote.pipe(local);
      },
      (err: BuildTunnelError) => {
        failure = err;
        local.destroy();
      },
    );
  });
  // mkdtemp makes the directory 0700: no other user can reach the socket inside (privateEndpoint:
  // on Windows a named pipe of the folder's random name instead).
  const dir = mkdtempSync(join(tmpdir(), 'devtool-build-'));
  const endpoint = privateEndpoint(dir, basename(dir));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(endpoint.listen, () => resolve());
    });
    if (endpoint.inFolder) chmodSync(endpoint.listen, 0o600);
  } catch (err) {
    spare?.destroy();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    address: endpoint.address,
    get failure() {
      return failure;
    },
    get cuts() {
      return cuts;
    },
    close: async () => {
      spare?.destroy();
      for (const s of live) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
