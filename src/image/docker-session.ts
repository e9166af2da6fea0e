/**
 * A BuildKit session with the Docker daemon, the channel through which BuildKit asks the client for
 * what stays on the client's machine: build secrets (`RUN --mount=type=secret`) and registry
 * credentials (private base images). The Docker CLI opens it the same way: `POST /session` upgraded
 * to h2c; on that connection the *daemon* is the gRPC client and we serve a few unary methods,
 * announced in X-Docker-Expose-Session-Grpc-Method headers; the build names the session with
 * `session=<id>`. Served here with node:http2 and protobuf's wire format (@bufbuild/protobuf),
 * since only three tiny messages are involved:
 *   grpc.health.v1.Health/Check              {service=1} -> {status=1 (1 = SERVING)}
 *   moby.filesync.v1.Auth/Credentials        {Host=1} -> {Username=1, Secret=2}
 *   moby.buildkit.secrets.v1.Secrets/GetSecret {ID=1, annotations=2} -> {data=1}
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import type { ServerHttp2Stream } from 'node:http2';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { RegistryCredentials } from './docker-config.ts';

const HEALTH = '/grpc.health.v1.Health/Check';
const CREDENTIALS = '/moby.filesync.v1.Auth/Credentials';
const GET_SECRET = '/moby.buildkit.secrets.v1.Secrets/GetSecret';
export const SESSION_METHODS = [HEALTH, CREDENTIALS, GET_SECRET];

/** gRPC status codes used here. */
const NOT_FOUND = 5;
const UNIMPLEMENTED = 12;
const INTERNAL = 13;

export interface SessionProvider {
  /** id -> absolute path of the file. */
  readonly secrets: Readonly<Record<string, string>>;
  credentials(host: string): Promise<RegistryCredentials | undefined>;
}

class GrpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The first string field `field` of a message. */
function readString(buf: Uint8Array, field: number): string {
  const r = new BinaryReader(buf);
  let out = '';
  while (r.pos < r.len) {
    const [f, wire] = r.tag();
    if (f === field && wire === WireType.LengthDelimited) out = r.string();
    else r.skip(wire, f);
  }
  return out;
}

export async function answer(method: string, request: Uint8Array, provider: SessionProvider): Promise<Uint8Array> {
  switch (method) {
    case HEALTH:
      return new BinaryWriter().tag(1, WireType.Varint).int32(1).finish();
    case CREDENTIALS: {
      const creds = await provider.credentials(readString(request, 1));
      const w = new BinaryWriter();
      if (creds?.identityToken) {
        // BuildKit's auth provider takes an identity token as Secret with an empty Username.
        w.tag(2, WireType.LengthDelimited).string(creds.identityToken);
      } else if (creds) {
        w.tag(1, WireType.LengthDelimited)
          .string(creds.username ?? '')
          .tag(2, WireType.LengthDelimited)
          .string(creds.password ?? '');
      }
      return w.finish();
    }
    case GET_SECRET: {
      const id = readString(request, 1);
      const path = provider.secrets[id];
      if (path === undefined) throw new GrpcError(NOT_FOUND, `secret ${id} not found: pass it with --secret id=${id},src=<LOCAL_PATH> or build.<name>.secrets`);
      const data = await readFile(path).catch((err: NodeJS.ErrnoException) => {
        throw new GrpcError(NOT_FOUND, `secret ${id}: cannot read ${path}: ${err.code ?? err.message}`);
      });
      return new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(data).finish();
    }
    default:
      throw new GrpcError(UNIMPLEMENTED, `${method} is not served by devtool`);
  }
}

/** One unary call: a length-prefixed message in, one out (or a trailers-only error). */
function serve(stream: ServerHttp2Stream, method: string, provider: SessionProvider): void {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('error', () => undefined);
  stream.on('end', () => {
    const body = Buffer.concat(chunks);
    const request = body.length >= 5 ? body.subarray(5, 5 + body.readUInt32BE(1)) : new Uint8Array();
    answer(method, request, provider).then(
      (reply) => {
        if (stream.destroyed) return;
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        const frame = Buffer.alloc(5 + reply.length);
        frame.writeUInt32BE(reply.length, 1);
        frame.set(reply, 5);
        stream.end(frame);
      },
      (err: unknown) => {
        if (stream.destroyed) return;
        const code = err instanceof GrpcError ? err.code : INTERNAL;
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': encodeURIComponent((err as Error).message) },
          { endStream: true },
        );
      },
    );
  });
}

export interface Session {
  readonly id: string;
  close(): void;
}

/**
 * Serves a session on `socket`, the connection the daemon upgraded (`POST /session`): the daemon
 * opens HTTP/2 streams on it, one per call.
 */
export async function serveSession(socket: Duplex, id: string, provider: SessionProvider): Promise<Session> {
  const { createServer } = process.getBuiltinModule('node:http2');
  const server = createServer();
  server.on('stream', (stream, headers) => serve(stream, String(headers[':path'] ?? ''), provider));
  server.on('sessionError', () => undefined);
  socket.on('error', () => undefined);
  server.emit('connection', socket);
  return {
    id,
    close: () => {
      socket.destroy();
      server.close();
    },
  };
}

/** Headers of the `POST /session` upgrade request. */
export function sessionHeaders(id: string): Record<string, string | string[]> {
  return {
    Upgrade: 'h2c',
    'X-Docker-Expose-Session-Uuid': id,
    'X-Docker-Expose-Session-Name': 'devtool',
    'X-Docker-Expose-Session-Sharedkey': '',
    'X-Docker-Expose-Session-Grpc-Method': SESSION_METHODS,
  };
}

export function newSessionId(): string {
  return randomUUID();
}
