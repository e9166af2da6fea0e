/**
 * What every namespace the service makes enforces, whoever owns it: a Pod Security level (no
 * privileged pods, host namespaces or hostPath volumes: a namespace `admin` could otherwise take
 * the node), and, when the operator sets them, a ResourceQuota and a LimitRange (one user must not
 * starve a node). The owner's `admin` ClusterRole may read these objects but never change them, nor
 * the Namespace's labels: only the service writes them.
 *
 * Pure: the objects as functions of the policy; kubernetes.ts applies them.
 */
import type * as k8s from '@kubernetes/client-node';

export const POD_SECURITY_LEVELS = ['baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

export interface NamespacePolicy {
  /** Enforced Pod Security Standard (pod-security.kubernetes.io/enforce). */
  podSecurity: PodSecurityLevel;
  /** ResourceQuota `hard` (e.g. pods, requests.cpu); absent: no quota. */
  quota?: Record<string, string>;
  /** LimitRange of containers (default, defaultRequest, max...); absent: none. */
  limits?: LimitRangeSpec;
}

/** A container LimitRange item's quantities by field. */
export type LimitRangeSpec = Partial<Record<'default' | 'defaultRequest' | 'max' | 'min', Record<string, string>>>;

export const DEFAULT_NAMESPACE_POLICY: NamespacePolicy = { podSecurity: 'baseline' };

/**
 * The namespace of the service that made a namespace (its release's). The chart's admission policies
 * for endpoint hosts select the release's namespaces by it, when another ingress controller serves
 * them. Only the service writes it, like every label of its namespaces.
 */
export const LABEL_SERVICE = 'devtool.dev/service';

/** The name of the quota and the limit range the service keeps in each of its namespaces. */
export const POLICY_OBJECT_NAME = 'devtool-limits';

const PSA = 'pod-security.kubernetes.io';

/**
 * The Namespace labels of the policy: `enforce` at the level, and `warn`/`audit` at `restricted`
 * (a user running under baseline is told what restricted would refuse).
 */
export function podSecurityLabels(policy: NamespacePolicy): Record<string, string> {
  return {
    [`${PSA}/enforce`]: policy.podSecurity,
    [`${PSA}/enforce-version`]: 'latest',
    [`${PSA}/warn`]: 'restricted',
    [`${PSA}/warn-version`]: 'latest',
  };
}

/** Whether a namespace's labels already say what the policy asks. */
export function hasPodSecurityLabels(labels: Record<string, string> | undefined, policy: NamespacePolicy): boolean {
  return Object.entries(podSecurityLabels(policy)).every(([k, v]) => labels?.[k] === v);
}

export function resourceQuota(policy: NamespacePolicy, labels: Record<string, string>): k8s.V1ResourceQuota | undefined {
  if (!policy.quota || Object.keys(policy.quota).length === 0) return undefined;
  return { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: POLICY_OBJECT_NAME, labels }, spec: { hard: { ...policy.quota } } };
}

export function limitRange(policy: NamespacePolicy, labels: Record<string, string>): k8s.V1LimitRange | undefined {
  if (!policy.limits || Object.keys(policy.limits).length === 0) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: POLICY_OBJECT_NAME, labels },
    spec: { limits: [{ type: 'Container', ...policy.limits }] },
  };
}

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

/** A map of resource names to quantities from JSON; a wrong one is an Error naming `what`. */
function quantities(value: unknown, what: string): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what}: expected an object of resource: quantity`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    const text = typeof v === 'number' ? String(v) : v;
    if (typeof text !== 'string' || !QUANTITY.test(text)) throw new Error(`${what}.${k}: ${JSON.stringify(v)} is not a Kubernetes quantity`);
    out[k] = text;
  }
  return out;
}

/**
 * The policy from the service's environment: DEVTOOL_POD_SECURITY (baseline | restricted),
 * DEVTOOL_NAMESPACE_QUOTA and DEVTOOL_NAMESPACE_LIMITS (JSON, as the chart renders its values).
 */
export function readNamespacePolicy(env: NodeJS.ProcessEnv): NamespacePolicy {
  const level = env['DEVTOOL_POD_SECURITY']?.trim() || DEFAULT_NAMESPACE_POLICY.podSecurity;
  if (!(POD_SECURITY_LEVELS as readonly string[]).includes(level)) {
    throw new Error(`DEVTOOL_POD_SECURITY=${level}: expected ${POD_SECURITY_LEVELS.join(' or ')} (privileged is never given to users)`);
  }
  const policy: NamespacePolicy = { podSecurity: level as PodSecurityLevel };
  const json = (name: string): unknown => {
    const text = env[name]?.trim();
    if (!text) return undefined;
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(`${name}: not JSON (${(err as Error).message})`);
    }
  };
  const quota = json('DEVTOOL_NAMESPACE_QUOTA');
  if (quota !== undefined && quota !== null) {
    const q = quantities(quota, 'DEVTOOL_NAMESPACE_QUOTA');
    if (Object.keys(q).length) policy.quota = q;
  }
  const limits = json('DEVTOOL_NAMESPACE_LIMITS');
  if (limits !== undefined && limits !== null) {
    if (typeof limits !== 'object' || Array.isArray(limits))
      throw new Error('DEVTOOL_NAMESPACE_LIMITS: expected an object (default, defaultRequest, max, min)');
    const spec: LimitRangeSpec = {};
    for (const [field, value] of Object.entries(limits)) {
      if (!['default', 'defaultRequest', 'max', 'min'].includes(field)) {
        throw new Error(`DEVTOOL_NAMESPACE_LIMITS.${field}: expected one of default, defaultRequest, max, min`);
      }
      const q = quantities(value, `DEVTOOL_NAMESPACE_LIMITS.${field}`);
      if (Object.keys(q).length) spec[field as keyof LimitRangeSpec] = q;
    }
    if (Object.keys(spec).length) policy.limits = spec;
  }
  return policy;
}
