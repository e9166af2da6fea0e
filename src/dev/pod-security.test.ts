import assert from 'node:assert/strict';
import { test } from 'node:test';
import { podOf, podSecurityRefusal, refusalMessage } from './pod-security.ts';
import type { DevService } from '../manifest/model.ts';

// The API server's words, as the local cluster (v1.33) answers a Pod dry run in a restricted namespace.
const REFUSED =
  'pods "api-devtool-x" is forbidden: violates PodSecurity "restricted:latest": runAsUser=0 (container "api" must not set runAsUser=0), ' +
  'unrestricted capabilities (container "api" must not include "NET_ADMIN" in securityContext.capabilities.add)';

const dev = { sync: [], securityContext: { runAsUser: 0 } } as unknown as DevService;

test('a PSA refusal is read as its policy and reasons; anything else is not one', () => {
  assert.deepEqual(podSecurityRefusal(REFUSED), {
    policy: 'restricted:latest',
    reasons:
      'runAsUser=0 (container "api" must not set runAsUser=0), ' +
      'unrestricted capabilities (container "api" must not include "NET_ADMIN" in securityContext.capabilities.add)',
  });
  assert.equal(podSecurityRefusal('pods is forbidden: User "ann" cannot create resource "pods"'), undefined);
  assert.equal(podSecurityRefusal('exceeded quota: compute, requested: pods=1'), undefined);
});

test('the refusal is one line naming the policy, the field and what to change', () => {
  const r = podSecurityRefusal(REFUSED)!;
  const line = refusalMessage({ ...r, devName: 'api', namespace: 'team', originalRefused: false, original: 'api', dev });
  assert.ok(!line.includes('\n'));
  assert.match(
    line,
    /^dev container api cannot run in namespace team: its Pod Security policy "restricted" \(label pod-security.kubernetes.io\/enforce\) refuses runAsUser=0/,
  );
  assert.match(line, /change services\.api\.securityContext in the manifest/);
  assert.match(line, /nothing was changed$/);
  const own = refusalMessage({ ...r, devName: 'api', namespace: 'team', originalRefused: true, original: 'api', dev });
  assert.match(own, /deployment api's own pods are refused too/);
});

test('the dry-run pod carries the template as the ReplicaSet would', () => {
  const p = podOf('api-devtool', { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api' }] } });
  assert.equal(p.metadata?.generateName, 'api-devtool-');
  assert.deepEqual(p.metadata?.labels, { app: 'api' });
  assert.equal(p.spec?.containers[0]?.name, 'api');
});
