/**
 * Builds a @kubernetes/client-node KubeConfig for a devtool context. The client is loaded here,
 * lazily, so commands that never touch the cluster never pay for it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { DevtoolError, UnavailableError } from '../base/errors.ts';
import { kubeconfigPaths } from '../context/kubeconfig.ts';
import type { ResolvedContext } from '../context/store.ts';

export async function kubeConfigFor(ctx: ResolvedContext, env: Readonly<NodeJS.ProcessEnv>): Promise<KubeConfig> {
  if (ctx.isDevtool) {
    throw new UnavailableError(
      `the context "${ctx.name}" is a devtool service, and the service client is not built yet; select a cluster with 'devtool context use <CLUSTER_CONTEXT>'`,
    );
  }
  const k8s = await import('@kubernetes/client-node');
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

/** One line for an API error: the server's message when it sent one. */
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
