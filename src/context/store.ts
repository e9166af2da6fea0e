/**
 * The devtool contexts: which cluster and namespace commands act on, and with which builder and
 * registry. A context is either a kubeconfig context (named as in the kubeconfig) or a devtool
 * service URL. Settings devtool adds to either kind are kept in `contexts.json` (mode 0600, since
 * service contexts hold tokens); kubeconfig contexts that were never configured are listed too.
 *
 * The current context is, in order: DEVTOOL_URL / DEVTOOL_TOKEN (a service context for this
 * process only), the stored current context, then the kubeconfig's current-context, so a new
 * user's `kubectl` setup works with no `context use` at all.
 */
import { existsSync, readFileSync } from 'node:fs';
import { DevtoolError, UsageError } from '../base/errors.ts';
import type { DevtoolHome } from '../home.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import { CLOUD_URL, looksLikeUrl, normalizeServiceUrl } from '../service/cloud.ts';
import { loadKubeconfig, type KubeContext, type MergedKubeconfig } from './kubeconfig.ts';

export interface StoredContext {
  name: string;
  isDevtool: boolean;
  namespace?: string;
  /** `tcp://HOST:PORT` of a BuildKit daemon; absent means the local Docker daemon. */
  builder?: string;
  /** Registry host images are pushed to, e.g. `localhost:5000`. */
  registry?: string;
  /** Domain under which endpoints are exposed (plain clusters; a service announces its own). */
  endpointDomain?: string;
  /** The IngressClass endpoints' Ingresses name (a service announces its own); absent: the cluster's default class. */
  ingressClass?: string;
  token?: string;
  userId?: string;
  /** PEM of the CA the service announced (GET /api/v1/info), trusted for every later call of this context. */
  certificate?: string;
}

interface ContextsFile {
  current?: string;
  contexts: Record<string, StoredContext>;
}

export interface ResolvedContext extends StoredContext {
  namespace: string;
  /** Where the context came from, for messages. */
  source: 'stored' | 'kubeconfig' | 'environment';
  /** The kubeconfig entry, for kubeconfig contexts. */
  kube?: KubeContext;
  /** The API host (kubeconfig server or service URL). */
  host: string;
}

export class ContextStore {
  private cachedKubeconfig: Promise<MergedKubeconfig> | undefined;

  constructor(
    private readonly home: DevtoolHome,
    private readonly env: Readonly<NodeJS.ProcessEnv>,
  ) {}

  kubeconfig(): Promise<MergedKubeconfig> {
    this.cachedKubeconfig ??= loadKubeconfig(this.env);
    return this.cachedKubeconfig;
  }

  read(): ContextsFile {
    const file = this.home.contextsFile;
    if (!existsSync(file)) return { contexts: {} };
    try {
      const data = JSON.parse(readFileSync(file, 'utf8')) as ContextsFile;
      return { current: data.current, contexts: data.contexts ?? {} };
    } catch (err) {
      throw new DevtoolError(`${file}: cannot read the devtool contexts: ${(err as Error).message}`);
    }
  }

  private write(data: ContextsFile): void {
    writeFileAtomic(this.home.contextsFile, `${JSON.stringify(data, null, 2)}\n`, 0o600);
  }

  /** Every known context: stored ones and every kubeconfig context, current first marked by the caller. */
  async list(): Promise<ResolvedContext[]> {
    const data = this.read();
    const out = new Map<string, ResolvedContext>();
    for (const kube of (await this.kubeconfig()).contexts) out.set(kube.name, this.resolve(kube.name, data.contexts[kube.name], kube, 'kubeconfig'));
    for (const stored of Object.values(data.contexts)) {
      if (stored.isDevtool) out.set(stored.name, this.resolve(stored.name, stored, undefined, 'stored'));
    }
    return [...out.values()];
  }

  /** The current context, or undefined when nothing is configured at all. */
  async current(): Promise<ResolvedContext | undefined> {
    const envUrl = this.env.DEVTOOL_URL?.trim();
    const envToken = this.env.DEVTOOL_TOKEN?.trim();
    const data = this.read();
    if (envUrl || envToken) {
      const url = normalizeServiceUrl(envUrl || CLOUD_URL);
      const stored = data.contexts[url];
      const ctx = this.resolve(url, { ...stored, name: url, isDevtool: true, ...(envToken ? { token: envToken } : {}) }, undefined, 'environment');
      return ctx;
    }
    if (data.current) {
      const stored = data.contexts[data.current];
      // A service context takes nothing from the kubeconfig: not read (yaml's load alone is ~30 ms).
      if (stored?.isDevtool) return this.resolve(stored.name, stored, undefined, 'stored');
      const kc = await this.kubeconfig();
      const kube = kc.contexts.find((c) => c.name === data.current);
      if (!kube) {
        throw new DevtoolError(
          `the current context "${data.current}" is no longer in the kubeconfig (${kc.files.join(', ')}); run 'devtool context use' to pick another`,
        );
      }
      return this.resolve(kube.name, stored, kube, 'stored');
    }
    const kc = await this.kubeconfig();
    const kube = kc.currentContext ? kc.contexts.find((c) => c.name === kc.currentContext) : undefined;
    return kube ? this.resolve(kube.name, data.contexts[kube.name], kube, 'kubeconfig') : undefined;
  }

  /** The current context, or an error telling the user how to choose one. */
  async requireCurrent(): Promise<ResolvedContext> {
    const ctx = await this.current();
    if (!ctx) {
      throw new DevtoolError(
        `no current context: no devtool context is selected and the kubeconfig (${(await this.kubeconfig()).files.join(', ')}) has no ` +
          `current-context; run 'devtool context use <URL_OR_CLUSTER_CONTEXT>'`,
      );
    }
    return ctx;
  }

  /**
   * The context a command acts on: the one its --context flag names (a devtool context or a
   * kubeconfig context; the current one is left as it is), else the current one.
   */
  async select(name: string | undefined): Promise<ResolvedContext> {
    if (name === undefined) return this.requireCurrent();
    const known = await this.list();
    const byUrl = looksLikeUrl(name) ? safeNormalize(name) : name;
    const found = known.find((c) => c.name === name || c.name === byUrl);
    if (!found)
      throw new UsageError(`--context: unknown context "${name}" (known: ${known.map((c) => c.name).join(', ') || 'none'}); 'devtool context list' shows them`);
    return found;
  }

  async findKubeContext(name: string): Promise<KubeContext | undefined> {
    return (await this.kubeconfig()).contexts.find((c) => c.name === name);
  }

  /** Stores settings for a context and makes it current. */
  async use(name: string, settings: Omit<StoredContext, 'name'>): Promise<ResolvedContext> {
    return this.store(name, settings, true);
  }

  /**
   * Sets the namespace of the current context, or of `of` (the context a --context flag named),
   * which stays not current.
   */
  async setNamespace(namespace: string, of?: ResolvedContext): Promise<ResolvedContext> {
    const ctx = of ?? (await this.requireCurrent());
    if (ctx.source === 'environment') {
      throw new DevtoolError('the current context comes from DEVTOOL_URL/DEVTOOL_TOKEN and cannot be changed; unset them or pass --namespace to each command');
    }
    return this.store(ctx.name, { isDevtool: ctx.isDevtool, namespace }, of === undefined);
  }

  private async store(name: string, settings: Omit<StoredContext, 'name'>, makeCurrent: boolean): Promise<ResolvedContext> {
    const data = this.read();
    const merged: StoredContext = { ...data.contexts[name], ...settings, name };
    for (const key of Object.keys(merged) as (keyof StoredContext)[]) if (merged[key] === undefined) delete merged[key];
    data.contexts[name] = merged;
    if (makeCurrent) data.current = name;
    this.write(data);
    return this.resolve(name, merged, merged.isDevtool ? undefined : await this.findKubeContext(name), 'stored');
  }

  /** The user ID of the current service context, from devtool's own file only (cheap: for analytics). */
  currentUserId(): string | undefined {
    const envUrl = this.env.DEVTOOL_URL?.trim();
    const data = this.read();
    const key = envUrl || this.env.DEVTOOL_TOKEN ? safeNormalize(envUrl || CLOUD_URL) : data.current;
    return key ? data.contexts[key]?.userId : undefined;
  }

  /**
   * The current devtool service (analytics records go there only), from devtool's own file and
   * the environment (cheap: no kubeconfig); undefined on a plain cluster context or with none.
   */
  currentService(): { url: string; token?: string } | undefined {
    const envUrl = this.env.DEVTOOL_URL?.trim();
    const envToken = this.env.DEVTOOL_TOKEN?.trim();
    const data = this.read();
    if (envUrl || envToken) {
      const url = safeNormalize(envUrl || CLOUD_URL);
      const token = envToken || data.contexts[url]?.token;
      return { url, ...(token ? { token } : {}) };
    }
    const stored = data.current ? data.contexts[data.current] : undefined;
    if (!stored?.isDevtool) return undefined;
    return { url: stored.name, ...(stored.token ? { token: stored.token } : {}) };
  }

  /** Removes a stored context; returns false when there was none by that name. */
  delete(name: string): boolean {
    const data = this.read();
    const key = data.contexts[name] ? name : data.contexts[safeNormalize(name)] ? safeNormalize(name) : undefined;
    if (!key) return false;
    delete data.contexts[key];
    if (data.current === key) delete data.current;
    this.write(data);
    return true;
  }

  private resolve(name: string, stored: StoredContext | undefined, kube: KubeContext | undefined, source: ResolvedContext['source']): ResolvedContext {
    return {
      ...stored,
      name,
      isDevtool: stored?.isDevtool ?? false,
      namespace: stored?.namespace || kube?.namespace || 'default',
      source,
      ...(kube ? { kube } : {}),
      host: kube?.server ?? (stored?.isDevtool ? name : ''),
    };
  }
}

function safeNormalize(name: string): string {
  try {
    return normalizeServiceUrl(name);
  } catch {
    return name;
  }
}
