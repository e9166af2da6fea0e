/**
 * Builds a @kubernetes/client-node KubeConfig for a devtool context. The client is loaded here,
 * lazily, so commands that never touch the cluster never pay for it.
 */
import { oneLine } from '../base/text.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { DevtoolError, UnavailableError } from '../base/errors.ts';
import { networkTimeouts } from '../base/network-timeouts.ts';
import { kubeconfigPaths } from '../context/kubeconfig.ts';
import type { ResolvedContext } from '../context/store.ts';
import { boundKubeConfig, type SlowNotice } from './transport.ts';
import { describeUnreachable } from './unreachable.ts';

/**
 * The user's own credentials on a service context (service/kube-credentials.ts): asked before
 * every request, so a token is replaced before it expires however long the command runs.
 */
export interface ServiceKubeCredentials {
  current(): Promise<{ server: string; certificateAuthority: string; token: string }>;
}

/** The auth provider name that marks a service context's user in the KubeConfig built here. */
const SERVICE_AUTH = 'devtool-service';

/**
 * Every request of the KubeConfig made here waits a bounded time for its connection and its answer
 * (DEVTOOL_CONNECT_TIMEOUT, DEVTOOL_RESPONSE_TIMEOUT), and a refusal reads as one line (transport.ts).
 */
export async function kubeConfigFor(
  ctx: ResolvedContext,
  env: Readonly<NodeJS.ProcessEnv>,
  credentials?: ServiceKubeCredentials,
  notice?: SlowNotice,
): Promise<KubeConfig> {
  const timeouts = networkTimeouts(env);
  const k8s = await import('@kubernetes/client-node');
  const kc = await unboundKubeConfigFor(k8s, ctx, env, credentials);
  boundKubeConfig(k8s, kc, timeouts, { name: ctx.name, isDevtool: ctx.isDevtool }, notice);
  return kc;
}

async function unboundKubeConfigFor(
  k8s: typeof import('@kubernetes/client-node'),
  ctx: ResolvedContext,
  env: Readonly<NodeJS.ProcessEnv>,
  credentials?: ServiceKubeCredentials,
): Promise<KubeConfig> {
  if (ctx.isDevtool) {
    if (!credentials)
      throw new UnavailableError(`the context "${ctx.name}" is a devtool service: log in with 'devtool context use ${ctx.name} --token <API_TOKEN>'`);
    return serviceKubeConfig(k8s, ctx, credentials, env.DEVTOOL_KUBE_SERVER?.trim() || undefined);
  }
  const kc = new k8s.KubeConfig();
  // First file wins for a name, as kubectl merges them.
  for (const path of kubeconfigPaths(env).reverse()) {
    if (!existsSync(path)) continue;
    const one = new k8s.KubeConfig();
    one.loadFromFile(path);
    kc.mergeConfig(one, true);
  }
  if (!kc.getContextObject(ctx.name)) throw new DevtoolError(`context "${ctx.name}" is not in the kubeconfig`);
  kc.setCurrentContext(ctx.name);
  return kc;
}

/**
 * A KubeConfig for a service context: the API server and CA the service names, and a user whose
 * bearer token is set per request from `credentials` (client-node's custom authenticator), never
 * stored in the KubeConfig, so every request carries a current token. `server`
 * (DEVTOOL_KUBE_SERVER) replaces the announced address where that one is not reachable: a
 * pipeline's runner in the cluster uses https://kubernetes.default.svc (the same CA signs it).
 */
async function serviceKubeConfig(
  k8s: typeof import('@kubernetes/client-node'),
  ctx: ResolvedContext,
  credentials: ServiceKubeCredentials,
  server?: string,
): Promise<KubeConfig> {
  const first = await credentials.current();
  const kc = new k8s.KubeConfig();
  kc.addAuthenticator({
    isAuthProvider: (user) => user?.authProvider?.name === SERVICE_AUTH,
    applyAuthentication: async (_user, opts) => {
      const { token } = await credentials.current();
      opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    },
  });
  kc.loadFromOptions({
    clusters: [{ name: ctx.name, server: server ?? first.server, caData: Buffer.from(first.certificateAuthority).toString('base64'), skipTLSVerify: false }],
    users: [{ name: ctx.name, authProvider: { name: SERVICE_AUTH, config: {} } }],
    contexts: [{ name: ctx.name, cluster: ctx.name, user: ctx.name, namespace: ctx.namespace }],
    currentContext: ctx.name,
  });
  return kc;
}

/**
 * One line for an API error: the server's message when it sent one (what a caller that words the
 * line itself, or reads the message, wants; describeKubeFailure is the whole line).
 */
export function describeKubeError(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      /* keep the text */
    }
  }
  const message = (body as { message?: string } | undefined)?.message;
  return message ?? e.message ?? String(err);
}

/**
 * The whole line for a failed request: a refusal as kube/answer.ts words it (what, by whom, what to
 * do), a server that could not be reached as kube/unreachable.ts does, else describeKubeError.
 */
export function describeKubeFailure(err: unknown): string {
  const e = err as { name?: string; message?: string } | undefined;
  if (e?.name === 'KubeAnswerError' && e.message) return e.message;
  const text = oneLine(describeKubeError(err));
  return describeUnreachable(text) ?? text;
}
