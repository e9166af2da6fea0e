/**
 * The BuildKit backend: builds on a BuildKit daemon (BUILDKIT_HOST, or a context's `tcp://` builder)
 * through `devtool-buildkit`, a small Go program (buildkit/client/): BuildKit's session protocol,
 * which streams the build context and serves secrets and registry credentials to the daemon, is
 * implemented only by BuildKit's Go client. One child process per image: it reads the request as
 * JSON on stdin and answers with JSON lines (`{"log"}`..., then `{"result"}` or `{"error"}`); the
 * protocol is in buildkit/README.md.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';
import { BUILDKIT, locateHostBinary } from '../binaries/host-binary.ts';
import { DevtoolError, ExitCode } from '../base/errors.ts';
import type { BuildBackend, BuildLog, BuildRequest, BuildResult } from './backend.ts';
import { oneLine } from '../base/text.ts';
import type { TagLookup } from './registry.ts';

const run = promisify(execFile);

/** gRPC keepalive of the connection to the daemon; an absent field takes the default its line gives. */
export interface KeepaliveSettings {
  /** DEVTOOL_KEEPALIVE_CLIENT_TIME_MS: idle time before a ping (below 10 s: 10 s; absent: never). */
  readonly timeMs?: number;
  /** DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS: wait for a ping's answer (absent: 20 s). */
  readonly timeoutMs?: number;
  /** DEVTOOL_KEEPALIVE_CLIENT_PERMIT_WITHOUT_STREAM: ping with no active call (absent: false). */
  readonly permitWithoutStream?: boolean;
}

const TIME = 'DEVTOOL_KEEPALIVE_CLIENT_TIME_MS';
const TIMEOUT = 'DEVTOOL_KEEPALIVE_CLIENT_TIMEOUT_MS';
const PERMIT = 'DEVTOOL_KEEPALIVE_CLIENT_PERMIT_WITHOUT_STREAM';

/** The keepalive settings of `env`; a malformed value is a DevtoolError naming its variable. */
export function keepaliveSettings(env: Readonly<NodeJS.ProcessEnv>): KeepaliveSettings {
  const millis = (name: string, min: number): number | undefined => {
    const text = env[name]?.trim();
    if (!text) return undefined;
    const n = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(n) || n < min) {
      throw new DevtoolError(`invalid ${name} "${env[name]}": expected a whole number of milliseconds${min > 0 ? ' above 0' : ''}`);
    }
    return n;
  };
  const timeMs = millis(TIME, 0);
  const timeoutMs = millis(TIMEOUT, 1);
  let permitWithoutStream: boolean | undefined;
  const permit = env[PERMIT]?.trim().toLowerCase();
  if (permit) {
    if (!['true', 'false', '1', '0'].includes(permit)) throw new DevtoolError(`invalid ${PERMIT} "${env[PERMIT]}": expected true or false`);
    permitWithoutStream = permit === 'true' || permit === '1';
  }
  return {
    ...(timeMs !== undefined ? { timeMs } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(permitWithoutStream !== undefined ? { permitWithoutStream } : {}),
  };
}

/**
 * The BuildKit daemon to build on, if any: BUILDKIT_HOST (`HOST:PORT`, devtool's documented form,
 * or `tcp://HOST:PORT` / `unix:///PATH` as BuildKit's own tools do), else the context's builder
 * when it is `tcp://HOST:PORT`. Undefined: not a BuildKit build. A malformed value is a
 * DevtoolError naming where it came from.
 */
export function buildkitAddress(env: Readonly<NodeJS.ProcessEnv>, contextBuilder?: string): string | undefined {
  const host = env.BUILDKIT_HOST?.trim();
  if (host) {
    const address = /^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `tcp://${host}`;
    const problem = addressProblem(address);
    if (problem) throw new DevtoolError(`invalid BUILDKIT_HOST "${host}": ${problem}; expected HOST:PORT, tcp://HOST:PORT or unix:///PATH`);
    return address;
  }
  const builder = contextBuilder?.trim();
  if (builder?.startsWith('tcp://')) {
    const problem = addressProblem(builder);
    if (problem) throw new DevtoolError(`invalid builder "${builder}" in the current context: ${problem}; expected tcp://HOST:PORT`);
    return builder;
  }
  return undefined;
}

function addressProblem(address: string): string | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'not an address';
  }
  if (url.protocol === 'unix:') return url.pathname && url.pathname !== '/' ? undefined : 'no socket path';
  if (url.protocol !== 'tcp:') return `unsupported scheme ${url.protocol.slice(0, -1)}`;
  if (!url.hostname) return 'no host';
  if (!url.port) return 'no port';
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash || url.username) return 'unexpected text after the port';
  return undefined;
}

export interface BuildkitBackendOptions {
  /** `tcp://HOST:PORT` or `unix:///PATH`, from buildkitAddress(). */
  readonly address: string;
  /** The factory's environment: the keepalive settings, DEVTOOL_BUILDKIT_BIN, DOCKER_CONFIG (registry credentials). */
  readonly env: Readonly<NodeJS.ProcessEnv>;
  /** What messages call the daemon; default `buildkit (ADDRESS)`. */
  readonly name?: string;
}

/** The JSON request devtool-buildkit reads on stdin (it rejects unknown fields). */
function clientRequest(r: BuildRequest, address: string, keepalive: KeepaliveSettings): object {
  return {
    address,
    contextDir: r.contextDir,
    dockerfile: r.dockerfile,
    ...(r.target ? { target: r.target } : {}),
    args: r.args,
    secrets: r.secrets,
    noCache: r.noCache,
    cacheFrom: r.cacheFrom,
    exportCache: r.exportCache,
    tags: r.tags,
    labels: r.labels,
    keepalive,
  };
}

interface ClientLine {
  log?: string;
  result?: { digest?: string };
  error?: string;
  exitCode?: number;
}

// After SIGTERM the client cancels the solve (the daemon stops the build); SIGKILL if it hangs.
const KILL_GRACE_MS = 5000;
const STDERR_KEPT = 20;

export class BuildkitBackend implements BuildBackend {
  readonly name: string;
  private readonly address: string;
  private readonly env: Readonly<NodeJS.ProcessEnv>;
  private readonly keepalive: KeepaliveSettings;
  private readonly running = new Set<ChildProcess>();

  /** Throws a DevtoolError when a keepalive variable is malformed, before anything is built. */
  constructor(opts: BuildkitBackendOptions) {
    this.address = opts.address;
    this.env = opts.env;
    this.keepalive = keepaliveSettings(opts.env);
    this.name = opts.name ?? `buildkit (${opts.address})`;
  }

  async build(request: BuildRequest, log: BuildLog, signal?: AbortSignal): Promise<BuildResult> {
    const image = request.tags[0] ?? '(no tag)';
    const interrupted = () => new DevtoolError(`building ${image} was interrupted`, ExitCode.interrupted);
    if (signal?.aborted) throw interrupted();
    const binary = await locateHostBinary(BUILDKIT, this.env);
    if (signal?.aborted) throw interrupted();
    const input = clientRequest(request, this.address, this.keepalive);

    const child = spawn(binary.file, binary.args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...this.env } });
    this.running.add(child);
    let result: ClientLine['result'];
    let failure: ClientLine | undefined;
    const stderr: string[] = [];
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (text) => {
      let line: ClientLine;
      try {
        line = JSON.parse(text) as ClientLine;
      } catch {
        log.line(text);
        return;
      }
      if (typeof line.log === 'string') log.line(line.log);
      else if (line.result) result = line.result;
      else if (typeof line.error === 'string') failure = line;
    });
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (text) => {
      stderr.push(text);
      if (stderr.length > STDERR_KEPT) stderr.shift();
    });
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // A child that dies before reading its request makes this write fail with EPIPE: the exit
    // code and stderr tell why.
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(input));

    try {
      const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
        child.once('error', reject);
        // 'close' comes after stdout ended, so every line has been handled.
        child.once('close', (c, s) => resolve([c, s]));
      });
      if (signal?.aborted) throw interrupted();
      if (code === 0 && result) return result.digest ? { digest: result.digest } : {};
      if (failure?.error) throw new DevtoolError(`building ${image} failed: ${oneLine(failure.error)}`);
      const detail = stderr.filter((l) => l.trim()).at(-1) ?? 'no output';
      throw new DevtoolError(`building ${image} failed: devtool-buildkit ${sig ? `was killed by ${sig}` : `exited with code ${code}`}: ${oneLine(detail)}`);
    } catch (err) {
      if (err instanceof DevtoolError) throw err;
      throw new DevtoolError(`building ${image} failed: cannot run ${binary.file}: ${(err as Error).message}`);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      this.running.delete(child);
    }
  }

  /** `devtool-buildkit lookup`: the daemon resolves the image's manifest, as its push would reach the registry. */
  async lookup(image: string, signal?: AbortSignal): Promise<TagLookup> {
    try {
      const binary = await locateHostBinary(BUILDKIT, this.env);
      const { stdout } = await run(binary.file, [...binary.args, 'lookup', this.address, image], { env: { ...this.env }, ...(signal ? { signal } : {}) });
      const answer = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as { state?: string; reason?: string };
      if (answer.state === 'present' || answer.state === 'absent') return { state: answer.state };
      return { state: 'unknown', reason: `${this.name}: ${oneLine(answer.reason ?? 'no answer')}` };
    } catch (err) {
      return { state: 'unknown', reason: `${this.name}: ${oneLine((err as Error).message)}` };
    }
  }

  /** Stops builds still running (their clients cancel the solve on the daemon). */
  async close(): Promise<void> {
    for (const child of this.running) child.kill('SIGTERM');
  }
}
