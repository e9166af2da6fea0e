import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasPodSecurityLabels, limitRange, podSecurityLabels, readNamespacePolicy, resourceQuota } from './namespace-policy.ts';

test('the policy from the environment: baseline by default, restricted when asked, never privileged', () => {
  assert.deepEqual(readNamespacePolicy({}), { podSecurity: 'baseline' });
  assert.deepEqual(readNamespacePolicy({ DEVTOOL_POD_SECURITY: 'restricted' }), { podSecurity: 'restricted' });
  assert.throws(() => readNamespacePolicy({ DEVTOOL_POD_SECURITY: 'privileged' }), /DEVTOOL_POD_SECURITY=privileged: expected baseline or restricted/);
});

test('quota and limits from the JSON the chart renders; a wrong quantity or field is named', () => {
  const policy = readNamespacePolicy({
    DEVTOOL_NAMESPACE_QUOTA: '{"pods":"40","requests.cpu":"4","requests.memory":"8Gi","services.nodeports":0}',
    DEVTOOL_NAMESPACE_LIMITS: '{"defaultRequest":{"cpu":"10m","memory":"32Mi"}}',
  });
  assert.deepEqual(policy.quota, { pods: '40', 'requests.cpu': '4', 'requests.memory': '8Gi', 'services.nodeports': '0' });
  assert.deepEqual(policy.limits, { defaultRequest: { cpu: '10m', memory: '32Mi' } });
  // The chart renders {} for "none".
  assert.deepEqual(readNamespacePolicy({ DEVTOOL_NAMESPACE_QUOTA: '{}', DEVTOOL_NAMESPACE_LIMITS: '{}' }), { podSecurity: 'baseline' });
  assert.throws(() => readNamespacePolicy({ DEVTOOL_NAMESPACE_QUOTA: '{"pods":"many"}' }), /DEVTOOL_NAMESPACE_QUOTA.pods: "many" is not a Kubernetes quantity/);
  assert.throws(() => readNamespacePolicy({ DEVTOOL_NAMESPACE_QUOTA: '[1]' }), /DEVTOOL_NAMESPACE_QUOTA: expected an object/);
  assert.throws(() => readNamespacePolicy({ DEVTOOL_NAMESPACE_QUOTA: '{pods' }), /DEVTOOL_NAMESPACE_QUOTA: not JSON/);
  assert.throws(() => readNamespacePolicy({ DEVTOOL_NAMESPACE_LIMITS: '{"maximum":{}}' }), /DEVTOOL_NAMESPACE_LIMITS.maximum: expected one of/);
});

test('the objects: Pod Security labels enforce the level and warn at restricted; quota and limit range only when set', () => {
  const policy = readNamespacePolicy({ DEVTOOL_NAMESPACE_QUOTA: '{"pods":"5"}', DEVTOOL_NAMESPACE_LIMITS: '{"max":{"memory":"2Gi"}}' });
  const labels = podSecurityLabels(policy);
  assert.equal(labels['pod-security.kubernetes.io/enforce'], 'baseline');
  assert.equal(labels['pod-security.kubernetes.io/warn'], 'restricted');
  assert.ok(hasPodSecurityLabels({ ...labels, other: 'x' }, policy));
  assert.ok(!hasPodSecurityLabels({ ...labels, 'pod-security.kubernetes.io/enforce': 'privileged' }, policy));
  assert.ok(!hasPodSecurityLabels(undefined, policy));
  assert.deepEqual(resourceQuota(policy, { a: 'b' })?.spec, { hard: { pods: '5' } });
  assert.deepEqual(limitRange(policy, {})?.spec, { limits: [{ type: 'Container', max: { memory: '2Gi' } }] });
  assert.equal(resourceQuota({ podSecurity: 'baseline' }, {}), undefined);
  assert.equal(limitRange({ podSecurity: 'baseline' }, {}), undefined);
});
