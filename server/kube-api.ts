/**
 * The service's clients of the Kubernetes API, on connections kept alive. client-node 1.x makes a
 * new https.Agent for every request (KubeConfig.applySecurityAuthentication), so every call paid a
 * TCP and TLS handshake with the API server: three per authenticated request of the service (the
 * token, the user, the route's own read), most of what `devtool namespace list` waited for.
 * Here the kubeconfig still authenticates each request (a token read afresh, an exec plugin's
 * output); only the agent is shared while its TLS material stays the same.
 */
import { request as httpRequest } from 'node:http';
import { Agent, type AgentOptions, request as httpsRequest } from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/**
 * An idle connection is closed after this (an in-flight request is not bounded by it), before a
 * load balancer in front of the API server would drop it under a request (they wait 60 s or more).
 */
const IDLE_MS = 30_000;

type ApiClass<T> = new (config: k8s.Configuration) => T;

/** One per kubeconfig: the API clients made from it share its connections. */
const auths = new WeakMap<k8s.KubeConfig, k8s.SecurityAuthentication>();

/** `kc.makeApiClient(api)`, with one keep-alive agent for the TLS settings the kubeconfig gives. */
export function makeKeepAliveApiClient<T extends object>(mod: typeof k8s, kc: k8s.KubeConfig, api: ApiClass<T>): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  let auth = auths.get(kc);
  if (!auth) {
    auth = keepAliveAuth(kc);
    auths.set(kc, auth);
  }
  const config = mod.createConfiguration({
    baseServer: new mod.ServerConfiguration(cluster.server, {}),
    authMethods: { default: auth },
    httpApi: nodeHttpLibrary(mod),
  });
  return retryingReads(new api(config));
}

/**
 * client-node's transport on node:http(s) instead of node-fetch 2, whose check of chunked bodies
 * misfires on kept-alive sockets that are reused: it failed complete answers with "Premature
 * close" (node-fetch#1767) as soon as requests ran side by side (a preview list, the sweeper).
 * The body is read whole: the API server's answers to these clients are small objects and lists.
 */
export function nodeHttpLibrary(mod: typeof k8s): k8s.HttpLibrary {
  return mod.wrapHttpLibrary({
    send: (request) =>
      new Promise<k8s.ResponseContext>((resolve, reject) => {
        const body = request.getBody();
        if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
          reject(new Error('kube-api: only string bodies are sent'));
          return;
        }
        const url = new URL(request.getUrl());
        const signal = request.getSignal();
        // The length always said: Node frames a DELETE's body by nothing else, and the API server read
        // it as the start of the next request on that kept-alive connection (400 Bad Request).
        const headers = { ...request.getHeaders(), ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) };
        const options = { method: request.getHttpMethod().toString(), headers, agent: request.getAgent(), ...(signal ? { signal } : {}) };
        const req = (url.protocol === 'http:' ? httpRequest : httpsRequest)(url, options, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const data = Buffer.concat(chunks);
            const headers: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
            resolve(new mod.ResponseContext(res.statusCode ?? 0, headers, { text: async () => data.toString('utf8'), binary: async () => data }));
          });
        });
        req.on('error', reject);
        req.end(body);
      }),
  });
}

/** A failure of the connection itself (no HTTP answer): what a kept-alive socket closed by the server at that moment gives. */
export function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown };
  if (typeof e.code === 'number') return false; // an HTTP status: the server answered
  const code = String(e.errno ?? e.code ?? '');
  return (
    ['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNREFUSED', 'ETIMEDOUT'].includes(code) || /Premature close|socket hang up/.test(String(err))
  );
}

/**
 * The API client with its reads (read*, list*) tried once more when the connection was lost under
 * them: a kept-alive connection the API server closes just as a request goes out fails that
 * request (seen as "Premature close"), and a read may always be sent again. Writes are not
 * retried: whether they took effect is unknown.
 */
export function retryingReads<T extends object>(client: T): T {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string' || !/^(read|list)/.test(prop)) return value;
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (err) {
          if (!isConnectionLoss(err)) throw err;
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        }
      };
    },
  });
}

/** The kubeconfig's authentication, then its per-request agent swapped for a shared one with the same options. */
export function keepAliveAuth(kc: k8s.KubeConfig): k8s.SecurityAuthentication {
  let shared: { key: string; agent: Agent } | undefined;
  return {
    getName: () => 'kubeconfig authentication, connections kept alive',
    async applySecurityAuthentication(context) {
      await kc.applySecurityAuthentication(context);
      const made = context.getAgent();
      // A proxy's agent (the kubeconfig's proxy-url) or plain HTTP: left as client-node made it.
      if (!made || made.constructor !== Agent) return;
      const options = (made as Agent & { options: AgentOptions }).options;
      const key = JSON.stringify([options.ca, options.cert, options.key, options.pfx, options.rejectUnauthorized, options.servername].map(String));
      // Rotated client certificates (an exec plugin's): a new agent; the old one's connections end
      // when idle, like all of them (IDLE_MS), not under a request.
      if (shared?.key !== key) shared = { key, agent: new Agent({ ...options, keepAlive: true, timeout: IDLE_MS }) };
      context.setAgent(shared.agent);
    },
  };
}
