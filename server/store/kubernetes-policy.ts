/**
 * The namespace policy (namespace-policy.ts) on the cluster: applied to each namespace the service
 * makes before its owner gets any right there, and brought up to date at start-up in every namespace
 * the service made earlier (an upgrade that tightens the policy, or an install older than it, leaves
 * none behind). Each replica does it; the writes are idempotent.
 */
import type * as k8s from '@kubernetes/client-node';
import { orUndefined } from './kube-calls.ts';
import {
  hasPodSecurityLabels,
  LABEL_SERVICE,
  limitRange,
  type NamespacePolicy,
  POLICY_OBJECT_NAME,
  podSecurityLabels,
  resourceQuota,
} from './namespace-policy.ts';

/** The built-in ClusterRole every user gets in a global preview: read, no Secrets, no exec, no writes. */
export const ALL_USERS_ROLE = 'view';
export const ALL_USERS_BINDING = 'devtool-all-users';

export interface PolicyDeps {
  core: k8s.CoreV1Api;
  rbac: k8s.RbacAuthorizationV1Api;
  policy: NamespacePolicy;
  /** The service's labels with `own` added. */
  labels(own: Record<string, string>): Record<string, string>;
  mergePatch: k8s.ConfigurationOptions;
  /** The group of every user's ServiceAccount. */
  allUsersGroup: string;
  /** The service's own namespace: the value of LABEL_SERVICE on the namespaces it makes. */
  serviceNamespace: string;
}

const sameMap = (a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

export class NamespacePolicyEnforcer {
  constructor(private readonly d: PolicyDeps) {}

  /** The labels a new namespace is created with. */
  newNamespaceLabels(): Record<string, string> {
    return { ...podSecurityLabels(this.d.policy), [LABEL_SERVICE]: this.d.serviceNamespace };
  }

  /** The quota and limit range in `namespace`: made, replaced when they differ, removed when the policy has none. */
  async applyLimits(namespace: string): Promise<void> {
    const labels = this.d.labels({});
    const quota = resourceQuota(this.d.policy, labels);
    const existingQuota = await orUndefined(this.d.core.readNamespacedResourceQuota({ name: POLICY_OBJECT_NAME, namespace }));
    if (!quota) {
      if (existingQuota) await orUndefined(this.d.core.deleteNamespacedResourceQuota({ name: POLICY_OBJECT_NAME, namespace }));
    } else if (!existingQuota) await this.d.core.createNamespacedResourceQuota({ namespace, body: quota });
    else if (!sameMap(existingQuota.spec?.hard, quota.spec?.hard)) {
      await this.d.core.replaceNamespacedResourceQuota({
        name: POLICY_OBJECT_NAME,
        namespace,
        body: { ...quota, metadata: { ...quota.metadata, resourceVersion: existingQuota.metadata?.resourceVersion } },
      });
    }
    const limits = limitRange(this.d.policy, labels);
    const existingLimits = await orUndefined(this.d.core.readNamespacedLimitRange({ name: POLICY_OBJECT_NAME, namespace }));
    if (!limits) {
      if (existingLimits) await orUndefined(this.d.core.deleteNamespacedLimitRange({ name: POLICY_OBJECT_NAME, namespace }));
    } else if (!existingLimits) await this.d.core.createNamespacedLimitRange({ namespace, body: limits });
    else if (JSON.stringify(existingLimits.spec?.limits) !== JSON.stringify(limits.spec?.limits)) {
      await this.d.core.replaceNamespacedLimitRange({
        name: POLICY_OBJECT_NAME,
        namespace,
        body: { ...limits, metadata: { ...limits.metadata, resourceVersion: existingLimits.metadata?.resourceVersion } },
      });
    }
  }

  /** The RoleBinding that lets every user use a global preview. */
  allUsersBinding(): k8s.V1RoleBinding {
    return {
      metadata: { name: ALL_USERS_BINDING, labels: this.d.labels({}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ALL_USERS_ROLE },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: this.d.allUsersGroup }],
    };
  }

  /**
   * One namespace the service made, brought up to the policy: its Pod Security labels, quota and
   * limit range, and for a global preview the all-users binding's role (a binding's role cannot
   * change: it is made again). `unlabelled`: it was made before namespaces named their service and
   * its owner is a user of this one: it gets this service's label.
   */
  async reconcile(ns: k8s.V1Namespace, opts: { globalPreview: boolean; unlabelled: boolean }): Promise<string[]> {
    const name = ns.metadata!.name!;
    const changed: string[] = [];
    const labels: Record<string, string> = {};
    if (!hasPodSecurityLabels(ns.metadata?.labels, this.d.policy)) {
      Object.assign(labels, podSecurityLabels(this.d.policy));
      changed.push('pod security');
    }
    if (opts.unlabelled) {
      labels[LABEL_SERVICE] = this.d.serviceNamespace;
      changed.push('service label');
    }
    if (changed.length) await this.d.core.patchNamespace({ name, body: { metadata: { labels } } }, this.d.mergePatch);
    await this.applyLimits(name);
    if (opts.globalPreview) {
      const binding = await orUndefined(this.d.rbac.readNamespacedRoleBinding({ name: ALL_USERS_BINDING, namespace: name }));
      if (binding && binding.roleRef.name !== ALL_USERS_ROLE) {
        await orUndefined(this.d.rbac.deleteNamespacedRoleBinding({ name: ALL_USERS_BINDING, namespace: name }));
        await this.d.rbac.createNamespacedRoleBinding({ namespace: name, body: this.allUsersBinding() });
        changed.push(`all users' role ${binding.roleRef.name} -> ${ALL_USERS_ROLE}`);
      }
    }
    return changed;
  }
}
