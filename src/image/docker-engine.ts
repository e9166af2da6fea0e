/**
 * The Docker Engine API backend: builds with the daemon's BuildKit (`POST /build?version=2`, the
 * builder `docker build` uses), the context sent as a tar that honours `.dockerignore`
 * (build-context.ts), then pushes every tag (`POST /images/{name}/push` with X-Registry-Auth from the
 * Docker config). The transport is docker-modem (dockerode's), which reads DOCKER_HOST the way
 * the Docker CLI does: unix://, tcp:// (TLS with DOCKER_TLS_VERIFY / DOCKER_CERT_PATH) and ssh://.
 *
 * Choices: RUN steps use the host's network (`networkmode=host`, as buildkitd itself does without
 * CNI), so builds reach the network even on a daemon started without its bridge or iptables rules
 * (cluster/dockerd.sh). Secrets and private base images go through a BuildKit session
 * (docker-session.ts). `export_cache` has no registry-cache exporter in the Docker daemon: the
 * image is built with BuildKit's inline cache and also pushed to each export reference, which
 * `cache_from` can then use.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Duplex, Readable } from 'node:stream';
import { DevtoolError } from '../base/errors.ts';
import type { BuildBackend, BuildLog, BuildRequest, BuildResult } from './backend.ts';
import { BuildkitProgress, decodeStatus, dockerfileLine, exitCodeOf } from './buildkit-status.ts';
import { packBuildContext, scanBuildContext } from './build-context.ts';
import { DockerCredentials, registryAuthHeader } from './docker-config.ts';
import { newSessionId, serveSession, sessionHeaders, type Session } from './docker-session.ts';
import { formatReference, parseReference } from './reference.ts';
import { oneLine } from '../base/text.ts';
import { defaultDockerSocket, hostPlatform, userHome } from '../base/platform.ts';

type Modem = import('docker-modem');
type ModemOptions = NonNullable<ConstructorParameters<typeof import('docker-modem')>[0]>;

export interface DockerEndpoint {
  /** As the user would write DOCKER_HOST, for messages. */
  readonly display: string;
  readonly options: ModemOptions;
}

/** Where the daemon is: DOCKER_HOST, else the usual socket (pipe). Every transport field is set explicitly. */
export function dockerEndpoint(env: Readonly<NodeJS.ProcessEnv>, platform: NodeJS.Platform = hostPlatform): DockerEndpoint {
  const none = {
    host: undefined,
    port: undefined,
    socketPath: undefined,
    protocol: undefined,
    ca: undefined,
    cert: undefined,
    key: undefined,
    timeout: undefined,
  } as const;
  const raw = env.DOCKER_HOST?.trim();
  // npipe:////./pipe/docker_engine is the named pipe //./pipe/docker_engine: Docker's on Windows, where only it exists.
  if (!raw || raw.startsWith('unix://') || (platform === 'win32' && raw.startsWith('npipe://'))) {
    const [scheme, path] = raw ? (raw.split('://', 2) as [string, string]) : [platform === 'win32' ? 'npipe' : 'unix', ''];
    const socketPath = path || defaultDockerSocket(platform);
    return { display: `${scheme}://${socketPath}`, options: { ...none, socketPath } };
  }
  let url: URL;
  try {
    url = new URL(raw.includes('://') ? raw : `tcp://${raw}`);
  } catch {
    throw new DevtoolError(`DOCKER_HOST=${raw} is not an address: use unix:///path, tcp://HOST:PORT or ssh://USER@HOST`);
  }
  if (url.protocol === 'ssh:') {
    return {
      display: raw,
      options: {
        ...none,
        protocol: 'ssh',
        host: url.hostname,
        port: url.port || 22,
        username: decodeURIComponent(url.username),
        sshOptions: env.SSH_AUTH_SOCK ? { agent: env.SSH_AUTH_SOCK } : {},
      },
    };
  }
  if (url.protocol !== 'tcp:' && url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DevtoolError(`DOCKER_HOST=${raw}: ${url.protocol.slice(0, -1)} is not supported (unix, tcp or ssh${platform === 'win32' ? ', npipe' : ''})`);
  const tls = env.DOCKER_TLS_VERIFY === '1' || url.protocol === 'https:' || url.port === '2376';
  const certDir = env.DOCKER_CERT_PATH || join(userHome(env, platform), '.docker');
  const read = (name: string) => {
    try {
      return readFileSync(join(certDir, name));
    } catch {
      throw new DevtoolError(`DOCKER_HOST=${raw} uses TLS, and ${join(certDir, name)} cannot be read (set DOCKER_CERT_PATH)`);
    }
  };
  const certs = tls && (env.DOCKER_TLS_VERIFY === '1' || env.DOCKER_CERT_PATH) ? { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') } : {};
  return {
    display: raw,
    options: {
      ...none,
      protocol: tls ? 'https' : 'http',
      host: url.hostname,
      port: url.port || (tls ? 2376 : 2375),
      ...certs,
      ...({ pathPrefix: '/' } as object),
    },
  };
}

interface StreamMessage {
  id?: string;
  aux?: unknown;
  stream?: string;
  status?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
  errorDetail?: { message?: string };
}

export class DockerEngineBackend implements BuildBackend {
  readonly name = 'docker';
  private modem: Modem | undefined;
  private readonly endpoint: DockerEndpoint;
  private reachable: Promise<void> | undefined;

  constructor(
    env: Readonly<NodeJS.ProcessEnv>,
    private readonly credentials: DockerCredentials = DockerCredentials.load(env),
  ) {
    this.endpoint = dockerEndpoint(env);
  }

  async build(request: BuildRequest, log: BuildLog, signal?: AbortSignal): Promise<BuildResult> {
    const target = request.tags[0]!;
    await this.ensureReachable();
    const scanned = await scanBuildContext(request.contextDir, request.dockerfile, { hash: false });
    const session = await this.openSession(request);
    try {
      await this.runBuild(request, scanned, session, log, signal);
    } finally {
      session?.close();
    }
    let digest: string | undefined;
    for (const tag of [...request.tags, ...request.exportCache]) {
      const pushed = await this.push(tag, log, signal);
      if (tag === target) digest = pushed;
    }
    return digest ? { digest } : {};
  }

  async close(): Promise<void> {
    this.modem = undefined;
  }

  private async getModem(): Promise<Modem> {
    if (!this.modem) {
      const { default: Modem } = await import('docker-modem');
      this.modem = new Modem(this.endpoint.options);
    }
    return this.modem;
  }

  /** One quick `GET /_ping`, so an absent daemon is one clear line, not a build failure. */
  private ensureReachable(): Promise<void> {
    this.reachable ??= (async () => {
      const modem = await this.getModem();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(this.unreachable('no answer within 10s')), 10_000);
        modem.dial({ path: '/_ping', method: 'GET', statusCodes: { 200: true, 500: 'server error', 503: 'unavailable' } }, (err) => {
          clearTimeout(timer);
          if (err) reject(this.unreachable(describeDialError(err)));
          else resolve();
        });
      });
    })();
    return this.reachable;
  }

  private unreachable(why: string): DevtoolError {
    return new DevtoolError(
      `cannot reach the Docker daemon at ${this.endpoint.display} (${why}): start Docker or set DOCKER_HOST, or set BUILDKIT_HOST to build with a ` +
        `BuildKit daemon`,
    );
  }

  /** A BuildKit session for secrets and registry credentials (see docker-session.ts). */
  private async openSession(request: BuildRequest): Promise<Session | undefined> {
    const modem = await this.getModem();
    const id = newSessionId();
    const socket = await new Promise<Duplex>((resolve, reject) => {
      modem.dial(
        { path: '/session', method: 'POST', hijack: true, headers: sessionHeaders(id) as never, statusCodes: { 101: true, 200: true, 500: 'server error' } },
        (err, sock) => (err ? reject(err) : resolve(sock as Duplex)),
      );
    }).catch((err: Error) => {
      // Without a session the build still runs, but secrets and private base images cannot.
      if (Object.keys(request.secrets).length > 0)
        throw new DevtoolError(
          `cannot open a BuildKit session with the Docker daemon at ${this.endpoint.display} for build secrets: ${describeDialError(err)}`,
        );
      return undefined;
    });
    if (!socket) return undefined;
    const provider = { secrets: request.secrets, credentials: (host: string) => this.credentials.forRegistry(host) };
    return serveSession(socket, id, provider);
  }

  private async runBuild(
    request: BuildRequest,
    scanned: Awaited<ReturnType<typeof scanBuildContext>>,
    session: Session | undefined,
    log: BuildLog,
    signal?: AbortSignal,
  ): Promise<void> {
    const modem = await this.getModem();
    const image = request.tags[0]!;
    const args = { ...request.args, ...(request.exportCache.length > 0 ? { BUILDKIT_INLINE_CACHE: '1' } : {}) };
    const options = {
      t: [...request.tags, ...request.exportCache],
      dockerfile: scanned.dockerfile.nameInContext,
      ...(request.target ? { target: request.target } : {}),
      buildargs: JSON.stringify(args),
      labels: JSON.stringify(request.labels),
      ...(request.noCache ? { nocache: 'true' } : {}),
      ...(request.cacheFrom.length > 0 ? { cachefrom: JSON.stringify(request.cacheFrom) } : {}),
      networkmode: 'host',
      version: '2',
      rm: 'true',
      forcerm: 'true',
      ...(session ? { session: session.id } : {}),
    };
    const body = await packBuildContext(scanned);
    const response = await new Promise<Readable>((resolve, reject) => {
      modem.dial(
        {
          path: '/build?',
          method: 'POST',
          options,
          file: body,
          isStream: true,
          headers: { 'Content-Type': 'application/x-tar' },
          statusCodes: { 200: true, 400: 'bad parameter', 500: 'server error' },
          ...(signal ? { abortSignal: signal } : {}),
        },
        (err, res) => (err ? reject(err) : resolve(res as Readable)),
      );
    }).catch((err: Error) => {
      throw new DevtoolError(`building ${image} failed: ${describeDialError(err)}`);
    });
    const progress = new BuildkitProgress((line) => log.line(line));
    let error: string | undefined;
    await readMessages(response, (m) => {
      if (m.id === 'moby.buildkit.trace' && typeof m.aux === 'string') progress.handle(decodeStatus(Buffer.from(m.aux, 'base64')));
      else if (m.stream) for (const line of m.stream.replace(/\n$/, '').split('\n')) log.line(line);
      if (m.error || m.errorDetail?.message) error ??= m.errorDetail?.message ?? m.error;
    });
    if (error === undefined) return;
    const failed = progress.failed;
    const code = exitCodeOf(failed?.error ?? error);
    if (failed && code !== undefined) {
      const line = dockerfileLine(scanned.dockerfile.text.toString('utf8'), failed.step);
      const where = line !== undefined ? ` (${basename(request.dockerfile)}:${line})` : '';
      throw new DevtoolError(`building ${image} failed: step "${failed.step}"${where} exited with code ${code}`);
    }
    if (/no active session/.test(error))
      throw new DevtoolError(
        `building ${image} failed: the build needs a BuildKit session (secrets), which the Docker daemon at ${this.endpoint.display} refused`,
      );
    throw new DevtoolError(`building ${image} failed${failed ? ` at step "${failed.step}"` : ''}: ${oneLine(error)}`);
  }

  /** Pushes one tag; the pushed manifest's digest. */
  private async push(reference: string, log: BuildLog, signal?: AbortSignal): Promise<string | undefined> {
    const modem = await this.getModem();
    const ref = parseReference(reference);
    const creds = await this.credentials.forRegistry(ref.registry);
    const name = formatReference({ registry: ref.registry, repository: ref.repository });
    const response = await new Promise<Readable>((resolve, reject) => {
      modem.dial(
        {
          path: `/images/${name}/push?`,
          method: 'POST',
          options: { tag: ref.tag ?? 'latest' },
          authconfig: { base64: Buffer.from(JSON.stringify(registryAuthHeader(ref.registry, creds))).toString('base64url') },
          isStream: true,
          statusCodes: { 200: true, 404: 'no such image', 500: 'server error' },
          ...(signal ? { abortSignal: signal } : {}),
        },
        (err, res) => (err ? reject(err) : resolve(res as Readable)),
      );
    }).catch((err: Error) => {
      throw new DevtoolError(`pushing ${reference} failed: ${describeDialError(err)}`);
    });
    let digest: string | undefined;
    let error: string | undefined;
    const layers = new Map<string, string>();
    await readMessages(response, (m) => {
      const aux = m.aux as { Digest?: string } | undefined;
      if (aux?.Digest) digest = aux.Digest;
      if (m.error || m.errorDetail?.message) error ??= m.errorDetail?.message ?? m.error;
      // Per-layer outcomes once each (Pushed, Layer already exists, Mounted from), not every byte count.
      if (m.status && !/^(Preparing|Waiting|Pushing)$/.test(m.status) && (m.id === undefined || layers.get(m.id) !== m.status)) {
        if (m.id !== undefined) layers.set(m.id, m.status);
        log.line(m.id ? `${m.id}: ${m.status}` : m.status);
      }
    });
    if (error !== undefined) throw new DevtoolError(`pushing ${reference} failed: ${oneLine(error)}`);
    return digest;
  }
}

/** JSON messages of a Docker progress stream (one per line; a line may hold several objects). */
async function readMessages(stream: Readable, each: (m: StreamMessage) => void): Promise<void> {
  let buffer = '';
  const handle = (line: string) => {
    const text = line.trim();
    if (!text) return;
    for (const part of text.replace(/}\s*{/g, '}\n{').split('\n')) {
      try {
        each(JSON.parse(part) as StreamMessage);
      } catch {
        // Not JSON: a proxy's or an old daemon's plain text; nothing to act on.
      }
    }
  };
  for await (const chunk of stream) {
    buffer += (chunk as Buffer).toString('utf8');
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    lines.forEach(handle);
  }
  handle(buffer);
}

/** A dial error of docker-modem as a short reason. */
function describeDialError(err: Error & { code?: string; statusCode?: number; json?: unknown }): string {
  switch (err.code) {
    case 'ENOENT':
      return 'no such socket';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'EACCES':
      return 'permission denied: add yourself to the docker group, or use a rootless daemon';
    case 'ETIMEDOUT':
      return 'timed out';
    case 'ENOTFOUND':
      return 'unknown host';
  }
  const json = err.json as { message?: string } | undefined;
  if (err.statusCode && json?.message) return `HTTP ${err.statusCode}: ${oneLine(json.message)}`;
  return oneLine(err.message);
}
