/** The cluster and namespace a command acts on: the current context, with --namespace overriding. */
import type { ContextStore, ResolvedContext } from '../context/store.ts';
import { checkNamespaceName } from './naming.ts';

export interface ClusterTarget {
  context: ResolvedContext;
  namespace: string;
}

/** What a Kubernetes client is made for (the factory's kube()): the namespace defaults to the context's. */
export interface KubeTarget {
  context: ResolvedContext;
  namespace?: string;
}

/** Where the current context comes from (the command's factory passes itself). */
export interface ContextSource {
  readonly contexts: Pick<ContextStore, 'requireCurrent'>;
}

export async function clusterTarget(d: ContextSource, namespaceFlag: string | undefined): Promise<ClusterTarget> {
  const context = await d.contexts.requireCurrent();
  const namespace = namespaceFlag !== undefined ? checkNamespaceName(namespaceFlag) : context.namespace;
  return { context, namespace };
}

/** The domain public endpoints are served under: DEVTOOL_ENDPOINT_DOMAIN, else the context's setting. */
export function endpointDomain(d: { readonly env: Readonly<NodeJS.ProcessEnv> }, context: ResolvedContext): string | undefined {
  return d.env.DEVTOOL_ENDPOINT_DOMAIN?.trim() || context.endpointDomain || undefined;
}
