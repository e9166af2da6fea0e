/** The cluster and namespace a command acts on: --context or the current context, with --namespace overriding. */
import type { ContextStore, ResolvedContext } from '../context/store.ts';
import { UsageError } from '../base/errors.ts';
import { checkNamespaceName, dnsSubdomain } from './naming.ts';

export interface ClusterTarget {
  context: ResolvedContext;
  namespace: string;
}

/** What a Kubernetes client is made for (the factory's kube()): the namespace defaults to the context's. */
export interface KubeTarget {
  context: ResolvedContext;
  namespace?: string;
}

/** Where contexts come from (the command's factory passes itself). */
export interface ContextSource {
  readonly contexts: Pick<ContextStore, 'select'>;
}

/** What the command line says about the cluster: --context and --namespace, each undefined when not given. */
export interface ClusterFlags {
  context?: string | undefined;
  namespace?: string | undefined;
}

export async function clusterTarget(d: ContextSource, flags: ClusterFlags): Promise<ClusterTarget> {
  const context = await d.contexts.select(flags.context);
  const namespace = flags.namespace !== undefined ? checkNamespaceName(flags.namespace) : context.namespace;
  return { context, namespace };
}

/** How to configure the endpoint domain, for messages. */
export function endpointDomainHint(contextName: string): string {
  return `set DEVTOOL_ENDPOINT_DOMAIN, or run 'devtool context use ${contextName} --endpoint-domain <domain>'`;
}

/** The domain public endpoints are served under: DEVTOOL_ENDPOINT_DOMAIN, else the context's setting. */
export function endpointDomain(d: { readonly env: Readonly<NodeJS.ProcessEnv> }, context: ResolvedContext): string | undefined {
  return d.env.DEVTOOL_ENDPOINT_DOMAIN?.trim() || context.endpointDomain || undefined;
}

/**
 * The IngressClass the endpoints' Ingresses name: DEVTOOL_INGRESS_CLASS, else the context's (the
 * class a devtool service announces: its chart's `ingress.className` when the cluster's own
 * controller serves them). Undefined: none named, the cluster's default class takes them.
 */
export function ingressClass(d: { readonly env: Readonly<NodeJS.ProcessEnv> }, context: ResolvedContext | undefined): string | undefined {
  const fromEnv = d.env.DEVTOOL_INGRESS_CLASS?.trim();
  if (fromEnv) {
    if (fromEnv.length > 253 || !dnsSubdomain.test(fromEnv)) {
      throw new UsageError(`DEVTOOL_INGRESS_CLASS=${fromEnv}: not an IngressClass name (lower-case letters, digits, '-' and '.')`);
    }
    return fromEnv;
  }
  return context?.ingressClass || undefined;
}
