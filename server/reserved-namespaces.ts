/**
 * Namespace names no user may take, for a namespace or a preview environment: Kubernetes' own
 * (`kube-*`, `default`), the service's own namespace, and the operator's list
 * (DEVTOOL_RESERVED_NAMESPACES: names, or prefixes ending in `*`, of what they install later), so
 * that a user cannot squat a namespace a component will be installed into and own what lands there.
 */
import type { ServiceConfig } from './service-deps.ts';

/** Kubernetes' own names, reserved whatever the operator lists. */
export const ALWAYS_RESERVED: readonly string[] = ['kube-*', 'default'];

/** Why `name` is reserved (words for a one-line refusal), or undefined when anyone may take it. */
export function reservedNamespaceReason(config: Pick<ServiceConfig, 'reservedNamespaces' | 'serviceNamespace'>, name: string): string | undefined {
  if (config.serviceNamespace === name) return "the devtool service's own namespace";
  const match = (pattern: string) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern);
  if (ALWAYS_RESERVED.some(match)) return "Kubernetes' own: kube-*, default";
  const operator = (config.reservedNamespaces ?? []).find(match);
  if (operator) return `on the operator's list: ${operator}`;
  return undefined;
}
