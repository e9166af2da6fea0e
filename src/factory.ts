/**
 * The one place where a command's dependencies are made: streams, environment, home directory,
 * clock, logger, prompts, the context store and (lazily) the clients of outside systems: the
 * Kubernetes cluster (`kube`) and the devtool service (`service`). Commands take a Factory and
 * nothing global, so a test builds one with its own streams, temporary home and clock, and may hand
 * it the clients of outside systems (`clients`: test/command-harness.ts).
 * Below the commands, code receives narrow interfaces or plain values, never the Factory.
 */
// node:fs is loaded by every start-up already; import() of it would start the ES module loader (~10 ms).
import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { Analytics } from './analytics/analytics.ts';
import { ContextStore } from './context/store.ts';
import { DevtoolHome } from './home.ts';
import { Logger, type LogLevel } from './log/logger.ts';
import { secretEnvironmentValues } from './log/redact.ts';
import { TerminalPrompter, type Prompter } from './io/prompt.ts';
import { styleFor } from './io/style.ts';
// Types only: the client module (and @kubernetes/client-node, ~14 MB) loads when kube() is called.
import type { KubeClient } from './kube/client.ts';
import type { KubeTarget } from './kube/target.ts';
// Types only: the service's client (and the API contract's schemas) load when service() is called.
import type { ServiceClient } from './service/client.ts';
import type { KubeCredentialCache } from './service/kube-credentials.ts';
import type { ResolvedContext } from './context/store.ts';
import { UnavailableError } from './base/errors.ts';
import { networkTimeouts } from './base/network-timeouts.ts';
import { VERSION } from './version.ts';

export interface IOStreams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
}

export interface Factory {
  readonly io: IOStreams;
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly cwd: string;
  readonly home: DevtoolHome;
  readonly version: string;
  readonly log: Logger;
  readonly prompter: Prompter;
  readonly contexts: ContextStore;
  readonly analytics: Analytics;
  now(): Date;
  /** True when stdin and stdout are terminals: prompts and spinners are allowed. */
  readonly interactive: boolean;
  /**
   * A Kubernetes client for a context, bound to `namespace` (default: the context's). Made when
   * asked for: the client library is loaded then, never by commands that do not ask.
   */
  kube(target: KubeTarget): Promise<KubeClient>;
  /** A client of the devtool service at `url`, with the user's API token when there is one. Made when asked for. */
  service(target: { url: string; token?: string; timeoutMs?: number }): Promise<ServiceClient>;
  /**
   * By service URL, the devtool version each service this command talked to named in its latest
   * answer (the newer-version notice: service/version-notice.ts).
   */
  serviceVersions(): ReadonlyMap<string, string>;
  /**
   * The user's own short-lived Kubernetes credentials on a service context, cached in the devtool
   * home and fetched again before they expire (kube() on a service context uses them).
   */
  kubeCredentials(context: ResolvedContext): Promise<KubeCredentialCache>;
}

export interface FactoryOptions {
  io: IOStreams;
  env: NodeJS.ProcessEnv;
  cwd: string;
  now?: () => Date;
  logLevel?: LogLevel;
  prompter?: Prompter;
  /**
   * Makers of the outside systems' clients that replace the real ones: a test's in-memory cluster
   * and in-process service. The real ones are made when these are absent.
   */
  clients?: Partial<Pick<Factory, 'kube' | 'service'>>;
}

export function createFactory(opts: FactoryOptions): Factory {
  const now = opts.now ?? (() => new Date());
  const home = DevtoolHome.fromEnv(opts.env);
  // stdout first: when it is not a terminal, stdin is never touched (see main.ts).
  const interactive = Boolean(opts.io.stdout.isTTY && opts.io.stdin.isTTY);
  // DEVTOOL_TOKEN, GITHUB_TOKEN...: the log never holds them, whatever line would repeat them.
  const log = new Logger({
    file: home.logFile,
    terminal: opts.io.stderr,
    level: opts.logLevel ?? 'warn',
    now,
    hidden: secretEnvironmentValues(opts.env),
    style: styleFor(opts.io.stderr, opts.env),
  });
  const contexts = new ContextStore(home, opts.env);
  let analytics: Analytics | undefined;
  const warn = (line: string) => log.warn(line);
  const realService: Factory['service'] = async ({ url, token, timeoutMs }) => {
    // tls.ts comes through the client's own bundle (scripts/build.mjs), not the start-up one.
    const { ServiceClient, trustedCas } = await import('./service/client.ts');
    const ca = trustedCas(opts.env, contexts.read().contexts[url]?.certificate, (file) => readFileSync(file, 'utf8'));
    // An explicit timeoutMs (analytics' short one) bounds everything; else the environment's timeouts, and the user hears of a slow wait.
    const env = timeoutMs ? undefined : networkTimeouts(opts.env);
    const timeouts = env ? { timeoutMs: env.responseMs, connectTimeoutMs: env.connectMs, notice: warn } : { timeoutMs };
    return new ServiceClient({ url, ...(token ? { token } : {}), ...(ca ? { ca } : {}), ...timeouts });
  };
  const madeClients: { url: string; client: ServiceClient }[] = [];
  const makeService = opts.clients?.service ?? realService;
  const service: Factory['service'] = async (target) => {
    const client = await makeService(target);
    madeClients.push({ url: target.url, client });
    return client;
  };
  const serviceVersions = () => {
    const versions = new Map<string, string>();
    for (const { url, client } of madeClients) if (client.serviceVersion) versions.set(url, client.serviceVersion);
    return versions;
  };
  const kubeCredentials: Factory['kubeCredentials'] = async (context) => {
    const token = context.token;
    if (!token) {
      throw new UnavailableError(
        `the service context ${context.name} requires a logged-in user: ` +
          `log in with 'devtool context use ${context.name} --token <API_TOKEN>' or set DEVTOOL_TOKEN`,
      );
    }
    const { KubeCredentialCache, kubeCredentialFile } = await import('./service/kube-credentials.ts');
    // The client only when the cached credentials are stale: kubectl runs `kubetoken` for every request.
    const fetchCredentials = async () => (await service({ url: context.name, token })).call('kubeCredentials');
    return new KubeCredentialCache(kubeCredentialFile(home.root, context.name, token), fetchCredentials, now);
  };
  return {
    io: opts.io,
    env: opts.env,
    cwd: opts.cwd,
    home,
    version: VERSION,
    log,
    prompter: opts.prompter ?? new TerminalPrompter(interactive),
    contexts,
    get analytics() {
      analytics ??= new Analytics(home, opts.env, VERSION, now, log);
      return analytics;
    },
    now,
    interactive,
    kube:
      opts.clients?.kube ??
      (async ({ context, namespace = context.namespace }) => {
        const { KubeClient } = await import('./kube/client.ts');
        return KubeClient.create(context, opts.env, namespace, context.isDevtool ? await kubeCredentials(context) : undefined, warn);
      }),
    service,
    serviceVersions,
    kubeCredentials,
  };
}
