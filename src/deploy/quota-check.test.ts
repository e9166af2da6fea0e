import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1LimitRange, V1ResourceQuota } from '@kubernetes/client-node';
import { runFixture, testdata } from '../compose/testing.ts';
import { namespaceLimitsOf } from '../kube/namespace-limits.ts';
import { deployLimitProblem, deployRefusal } from './quota-check.ts';

const translated = (fixture: string) => runFixture(join(testdata, fixture)).translation;
const quota = (name: string, hard: Record<string, string>, used: Record<string, string> = {}): V1ResourceQuota => ({
  metadata: { name },
  status: { hard, used },
});
const range = (name: string, ...limits: NonNullable<V1LimitRange['spec']>['limits']): V1LimitRange => ({ metadata: { name }, spec: { limits } });
const refusal = (fixture: string, quotas: V1ResourceQuota[], ranges: V1LimitRange[] = [], existing: string[] = [], freed = {}) => {
  const found = deployLimitProblem(translated(fixture), namespaceLimitsOf(quotas, ranges), new Set(existing), freed);
  return found && deployRefusal(found, 'app', 'team');
};

test('a service without the limit a quota demands is one line naming it, its object, the quota and the Compose field', () => {
  // resources: every service sets a memory limit; all but odd-memory a CPU reservation or limit (a limit makes the request).
  assert.equal(refusal('resources', [quota('compute', { 'limits.memory': '10Gi' })]), undefined);
  assert.equal(
    refusal('resources', [quota('compute', { 'requests.cpu': '10', 'limits.memory': '10Gi' })]),
    'cannot deploy service odd-memory (Deployment odd-memory) in namespace team: quota "compute" (requests.cpu) demands a cpu request of every ' +
      'container, and container "odd-memory" names none (no LimitRange gives a default); set deploy.resources.reservations.cpus of service ' +
      'odd-memory in the Compose file; nothing was applied',
  );
  assert.equal(
    refusal('image-only', [quota('compute', { 'limits.memory': '10Gi' })]),
    'cannot deploy service worker (Deployment worker) in namespace team: quota "compute" (limits.memory) demands a memory limit of every container, and ' +
      'container "worker" names none (no LimitRange gives a default); set deploy.resources.limits.memory of service worker in the Compose file; ' +
      'nothing was applied',
  );
  assert.equal(
    refusal('image-only', [quota('compute', { 'limits.memory': '10Gi' })], [range('defaults', { type: 'Container', _default: { memory: '256Mi' } })]),
    undefined,
    "a LimitRange's default is enough",
  );
});

test('a LimitRange bound the Compose resources break names the LimitRange and the field to change', () => {
  assert.equal(
    refusal('resources', [], [range('small', { type: 'Container', max: { memory: '512Mi' } })]),
    'cannot deploy service app (Deployment app) in namespace team: LimitRange "small" allows at most 512Mi of memory limit per container, and ' +
      'container "app" asks 1Gi; set deploy.resources.limits.memory of service app in the Compose file; nothing was applied',
  );
});

test('room for every replica of every service at once, less what the environment runs now', () => {
  // scale: 3 + 2 + 4 pods.
  const q = [quota('count', { pods: '10' }, { pods: '2' })];
  assert.equal(
    refusal('scale', q),
    'cannot deploy environment "app" in namespace team: quota "count" has no room for pods: it needs 9 more, and 2 of 10 is used; ' +
      'free room in the namespace (destroy or scale down what it runs), lower replicas or resources, or ask for a larger quota; nothing was applied',
  );
  assert.equal(refusal('scale', q, [], [], { pods: 2 }), undefined, "the environment's two pods are replaced");
});

test('claims: new ones need room and stay within the LimitRange; existing ones ask for none', () => {
  const storage = [quota('storage', { 'requests.storage': '10Gi' })];
  assert.match(refusal('volumes-named', storage)!, /has no room for requests\.storage: it needs 11Gi more, and 0 of 10Gi is used/);
  assert.equal(refusal('volumes-named', storage, [], ['cache']), undefined);
  assert.equal(
    refusal('volumes-named', [], [range('claims', { type: 'PersistentVolumeClaim', max: { storage: '5Gi' } })]),
    'cannot deploy PersistentVolumeClaim pgdata in namespace team: LimitRange "claims" allows at most 5Gi of storage request per claim, and the ' +
      "claim asks 10Gi; set the volume's driver_opts.size within the LimitRange in the Compose file; nothing was applied",
  );
});
