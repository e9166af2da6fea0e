/** The cluster and namespace a command acts on: the current context, with --namespace overriding. */
import type { ResolvedContext } from '../context/store.ts';
import type { Factory } from '../factory.ts';
import { checkNamespaceName } from './naming.ts';

export interface ClusterTarget {
  context: ResolvedContext;
  namespace: string;
}

export async function clusterTarget(f: Factory, namespaceFlag: string | undefined): Promise<ClusterTarget> {
  const context = await f.contexts.requireCurrent();
  const namespace = namespaceFlag !== undefined ? checkNamespaceName(namespaceFlag) : context.namespace;
  return { context, namespace };
}

/** The domain public endpoints are served under: DEVTOOL_ENDPOINT_DOMAIN, else the context's setting. */
export function endpointDomain(f: Factory, context: ResolvedContext): string | undefined {
  return f.env.DEVTOOL_ENDPOINT_DOMAIN?.trim() || context.endpointDomain || undefined;
}
