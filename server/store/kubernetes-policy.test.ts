/**
 * The namespace policy's reconcile against a recording fake of the few Kubernetes calls it makes:
 * which labels a namespace made earlier gets, in one patch.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as k8s from '@kubernetes/client-node';
import { NamespacePolicyEnforcer } from './kubernetes-policy.ts';
import { LABEL_SERVICE, podSecurityLabels } from './namespace-policy.ts';

function enforcer() {
  const patches: unknown[] = [];
  const notFound = () => Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
  const core = {
    patchNamespace: (req: { name: string; body: unknown }) => {
      patches.push(req);
      return Promise.resolve({});
    },
    readNamespacedResourceQuota: notFound,
    readNamespacedLimitRange: notFound,
  } as unknown as k8s.CoreV1Api;
  const policy = new NamespacePolicyEnforcer({
    core,
    rbac: {} as k8s.RbacAuthorizationV1Api,
    policy: { podSecurity: 'baseline' },
    labels: (own) => own,
    mergePatch: {},
    allUsersGroup: 'system:serviceaccounts:svc',
    serviceNamespace: 'svc',
  });
  return { policy, patches };
}

const namespace = (labels: Record<string, string>): k8s.V1Namespace => ({ metadata: { name: 'alice-devtool', labels } });

test('a new namespace names the service that made it', () => {
  assert.equal(enforcer().policy.newNamespaceLabels()[LABEL_SERVICE], 'svc');
});

test("an earlier namespace of this service's user gets the service label, with the Pod Security labels in one patch", async () => {
  const { policy, patches } = enforcer();
  const changed = await policy.reconcile(namespace({}), { globalPreview: false, unlabelled: true });
  assert.deepEqual(changed, ['pod security', 'service label']);
  assert.deepEqual(patches, [
    { name: 'alice-devtool', body: { metadata: { labels: { ...podSecurityLabels({ podSecurity: 'baseline' }), [LABEL_SERVICE]: 'svc' } } } },
  ]);
});

test('a namespace already up to the policy, or labelled by another release, is left alone', async () => {
  const { policy, patches } = enforcer();
  const labels = { ...podSecurityLabels({ podSecurity: 'baseline' }), [LABEL_SERVICE]: 'other' };
  assert.deepEqual(await policy.reconcile(namespace(labels), { globalPreview: false, unlabelled: false }), []);
  assert.deepEqual(patches, []);
});
