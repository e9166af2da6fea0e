/**
 * The Kubernetes client devtool commands use: typed APIs from @kubernetes/client-node, the generic
 * object API (server-side apply of any kind), and raw GETs for discovery. One instance per command,
 * bound to a context and namespace. This module is loaded lazily (the client is ~14 MB of JS).
 */
import * as k8s from '@kubernetes/client-node';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { DevtoolError } from '../base/errors.ts';
import type { ResolvedContext } from '../context/store.ts';
import { describeKubeError, kubeConfigFor, type ServiceKubeCredentials } from './config.ts';
import type { SlowNotice } from './transport.ts';

/** The field manager of every devtool write, so server-side apply knows what devtool owns. */
export const FIELD_MANAGER = 'devtool';

export class KubeClient {
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly batch: k8s.BatchV1Api;
  readonly objects: ObjectApi;

  private constructor(
    readonly kc: k8s.KubeConfig,
    readonly context: ResolvedContext,
    readonly namespace: string,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.apps = kc.makeApiClient(k8s.AppsV1Api);
    this.batch = kc.makeApiClient(k8s.BatchV1Api);
    this.objects = ObjectApi.for(kc);
  }

  private networkingApi: k8s.NetworkingV1Api | undefined;

  /** Ingresses: made on first use, as only `endpoints` reads them. */
  get networking(): k8s.NetworkingV1Api {
    this.networkingApi ??= this.kc.makeApiClient(k8s.NetworkingV1Api);
    return this.networkingApi;
  }

  /**
   * `credentials`: the user's own, for a service context (the factory makes them); `notice`: told
   * once when the API server is slow to connect or to answer (transport.ts).
   */
  static async create(
    context: ResolvedContext,
    env: Readonly<NodeJS.ProcessEnv>,
    namespace = context.namespace,
    credentials?: ServiceKubeCredentials,
    notice?: SlowNotice,
  ): Promise<KubeClient> {
    return new KubeClient(await kubeConfigFor(context, env, credentials, notice), context, namespace);
  }

  /** GET a path of the API server and parse the JSON answer (discovery, which the typed APIs lack). */
  async getJson<T>(path: string): Promise<T> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new DevtoolError(`context "${this.context.name}" has no cluster`);
    const url = new URL(path, cluster.server);
    const opts: RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
    await this.kc.applyToHTTPSOptions(opts);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const req = send(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 400) {
            reject(new DevtoolError(`GET ${path}: ${res.statusCode} ${describeKubeError({ body: text, message: text })}`));
            return;
          }
          try {
            resolve(JSON.parse(text) as T);
          } catch (err) {
            reject(err);
          }
        });
      });
      req.setTimeout(30_000, () => req.destroy(new DevtoolError(`GET ${path}: no answer from ${cluster.server} in 30s`)));
      req.on('error', reject);
      req.end();
    });
  }
}

/**
 * The generic object API (server-side apply of any kind). Its first write of an API version first
 * reads that version's resource list (discovery: 10 to 40 ms, cached for the client's life);
 * `discover` reads it ahead, while the caller does something else.
 */
export class ObjectApi extends k8s.KubernetesObjectApi {
  /** As KubernetesObjectApi.makeApiClient makes its own. */
  static for(kc: k8s.KubeConfig): ObjectApi {
    const api = kc.makeApiClient(ObjectApi);
    api.setDefaultNamespace(kc);
    return api;
  }

  async discover(apiVersion: string, kind: string): Promise<void> {
    await this.resource(apiVersion, kind);
  }
}

/** True for a Kubernetes "not found" answer. */
export function isNotFound(err: unknown): boolean {
  return (err as { code?: number }).code === 404;
}

/** Bounds a call to the API server, so an unreachable cluster fails with a clear line instead of hanging. */
export async function withTimeout<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DevtoolError(`${what}: no answer from the cluster in ${Math.round(ms / 1000)}s`)), ms);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A failure that says nothing about the request itself: the API server restarting, a dropped
 * connection, overload. Waits retry these until their deadline instead of failing the command.
 */
export function isTransient(err: unknown): boolean {
  const e = err as { code?: number | string; message?: string; cause?: { code?: string } };
  if (typeof e.code === 'number') return e.code === 429 || e.code >= 500;
  const text = `${e.code ?? ''} ${e.cause?.code ?? ''} ${e.message ?? ''}`;
  return /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EAI_AGAIN|socket hang up|network socket disconnected/i.test(text);
}
