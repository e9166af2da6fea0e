import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Container, V1LimitRange, V1ResourceQuota } from '@kubernetes/client-node';
import {
  admittedResources,
  claimProblems,
  claimUsage,
  describeProblem,
  namespaceLimitsOf,
  NO_LIMITS,
  ownContainerResources,
  podProblems,
  podUsage,
  roomProblems,
  type NamespaceLimits,
} from './namespace-limits.ts';

const quota = (name: string, hard: Record<string, string>, used: Record<string, string> = {}, spec: V1ResourceQuota['spec'] = {}): V1ResourceQuota => ({
  metadata: { name },
  spec: { hard, ...spec },
  status: { hard, used },
});
const range = (name: string, ...limits: NonNullable<V1LimitRange['spec']>['limits']): V1LimitRange => ({ metadata: { name }, spec: { limits } });
const limitsOf = (quotas: V1ResourceQuota[], ranges: V1LimitRange[] = []): NamespaceLimits => namespaceLimitsOf(quotas, ranges);
const container = (name: string, resources?: V1Container['resources']): V1Container => ({ name, ...(resources ? { resources } : {}) });

test('quotas with scopes are left to the API server; the others are read from their status', () => {
  const l = limitsOf([
    quota('compute', { 'limits.memory': '1Gi' }, { 'limits.memory': '256Mi' }),
    quota('best-effort', { pods: '2' }, {}, { scopes: ['BestEffort'] }),
    quota('priority', { pods: '2' }, {}, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } }),
  ]);
  assert.deepEqual(l.quotas, [{ name: 'compute', hard: { 'limits.memory': 2 ** 30 }, used: { 'limits.memory': 2 ** 28 } }]);
});

test('a container gets requests from its limits, then what LimitRanges of type Container default', () => {
  const l = limitsOf([], [range('defaults', { type: 'Container', _default: { memory: '256Mi', cpu: '1' }, defaultRequest: { memory: '64Mi' } })]);
  assert.deepEqual(admittedResources(container('a', { limits: { cpu: '500m' } }), l), {
    requests: { cpu: 0.5, memory: 64 * 2 ** 20 },
    limits: { cpu: 0.5, memory: 256 * 2 ** 20 },
  });
});

test('a quota on cpu or memory demands it of every container, init containers included, unless a LimitRange defaults it', () => {
  const q = quota('compute', { 'requests.cpu': '2', 'limits.memory': '2Gi', pods: '10' });
  const spec = {
    initContainers: [container('init')],
    containers: [container('app', { limits: { cpu: '1', memory: '1Gi' } }), container('sidecar', { requests: { cpu: '100m' } })],
  };
  const problems = podProblems(spec, limitsOf([q]));
  assert.deepEqual(
    problems.map((p) => (p.kind === 'missing' ? `${p.container}:${p.resources.join('+')}` : p.kind)),
    ['init:limits.memory+requests.cpu', 'sidecar:limits.memory'],
  );
  assert.equal(
    describeProblem(problems[0]!),
    'quota "compute" (limits.memory, requests.cpu) demands a memory limit and a cpu request of every container, and container "init" names neither ' +
      '(no LimitRange gives a default)',
  );
  assert.equal(
    describeProblem(problems[1]!),
    'quota "compute" (limits.memory) demands a memory limit of every container, and container "sidecar" names none (no LimitRange gives a default)',
  );
  const defaulted = limitsOf([q], [range('defaults', { type: 'Container', _default: { memory: '128Mi' }, defaultRequest: { cpu: '50m' } })]);
  assert.deepEqual(podProblems(spec, defaulted), []);
});

test('LimitRange bounds: a maximum demands a limit, a minimum a request, and the ratio both', () => {
  const l = limitsOf([], [range('bounds', { type: 'Container', max: { memory: '128Mi' }, min: { cpu: '100m' }, maxLimitRequestRatio: { cpu: '2' } })]);
  const p = (resources: V1Container['resources']) => podProblems({ containers: [container('dev', resources)] }, l).map(describeProblem);
  assert.deepEqual(p({ requests: { cpu: '100m' }, limits: { memory: '256Mi', cpu: '200m' } }), [
    'LimitRange "bounds" allows at most 128Mi of memory limit per container, and container "dev" asks 256Mi',
  ]);
  assert.deepEqual(p({ requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } }), [
    'LimitRange "bounds" allows no less than 100m of cpu request per container, and container "dev" asks 50m',
  ]);
  assert.deepEqual(p({ requests: { cpu: '100m' }, limits: { cpu: '400m', memory: '64Mi' } }), [
    'LimitRange "bounds" allows a cpu limit of at most 2 times the request, and container "dev" asks 4 times',
  ]);
  assert.deepEqual(p({ requests: { cpu: '100m' } }), [
    'LimitRange "bounds" allows at most 128Mi of memory limit per container, and container "dev" names no memory limit',
    'LimitRange "bounds" allows a cpu limit of at most 2 times the request, and container "dev" names no request or no limit',
  ]);
  // A LimitRange of type Pod bounds the pod's totals.
  const pod = limitsOf([], [range('per-pod', { type: 'Pod', max: { memory: '100Mi' } })]);
  const two = { containers: [container('a', { limits: { memory: '60Mi' } }), container('b', { limits: { memory: '60Mi' } })] };
  assert.deepEqual(podProblems(two, pod).map(describeProblem), ['LimitRange "per-pod" allows at most 100Mi of memory limit per pod, and the pod asks 120Mi']);
});

test('a pod counts its containers and sidecars together, or its largest init container, whichever is more', () => {
  const spec = {
    initContainers: [container('sidecar', { requests: { cpu: '100m' } }), container('migrate', { requests: { cpu: '2', memory: '64Mi' } })],
    containers: [container('app', { requests: { cpu: '500m', memory: '256Mi' }, limits: { memory: '512Mi' } })],
  };
  spec.initContainers[0]!.restartPolicy = 'Always';
  assert.deepEqual(podUsage(spec, NO_LIMITS), {
    pods: 1,
    'count/pods': 1,
    'requests.cpu': 2.1, // migrate beside the sidecar started before it
    cpu: 2.1,
    'requests.memory': 256 * 2 ** 20,
    memory: 256 * 2 ** 20,
    'limits.memory': 512 * 2 ** 20,
  });
});

test('room: what is asked on top of what is used, less what goes away at the same time', () => {
  const l = limitsOf([quota('compute', { pods: '1', 'requests.cpu': '1' }, { pods: '1', 'requests.cpu': '600m' })]);
  const asked = { pods: 1, 'requests.cpu': 0.5 };
  assert.deepEqual(roomProblems(asked, {}, l).map(describeProblem), [
    'quota "compute" has no room for pods: it needs 1 more, and 1 of 1 is used',
    'quota "compute" has no room for requests.cpu: it needs 500m more, and 600m of 1 is used',
  ]);
  // The original's pod goes in the swap: its pod and its 600m come back.
  assert.deepEqual(roomProblems(asked, { pods: 1, 'requests.cpu': 0.6 }, l), []);
  // Only what the quota counts as used can come back.
  assert.equal(
    describeProblem(roomProblems({ pods: 2 }, { pods: 5 }, l)[0]!),
    'quota "compute" has no room for pods: it needs 2 more, and 0 of 1 is used (1 of it freed as the old pods go)',
  );
});

test('claims: their count and storage, per storage class when they name one, and LimitRange bounds on their size', () => {
  const claim = { spec: { storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } } };
  assert.deepEqual(claimUsage(claim), {
    persistentvolumeclaims: 1,
    'count/persistentvolumeclaims': 1,
    'requests.storage': 5 * 2 ** 30,
    'fast.storageclass.storage.k8s.io/persistentvolumeclaims': 1,
    'fast.storageclass.storage.k8s.io/requests.storage': 5 * 2 ** 30,
  });
  const l = limitsOf(
    [quota('storage', { 'requests.storage': '2Gi', persistentvolumeclaims: '0' })],
    [range('claims', { type: 'PersistentVolumeClaim', max: { storage: '1Gi' }, min: { storage: '1Mi' } })],
  );
  assert.deepEqual(claimProblems(claim, l).map(describeProblem), [
    'LimitRange "claims" allows at most 1Gi of storage request per claim, and the claim asks 5Gi',
  ]);
  assert.deepEqual(roomProblems(claimUsage(claim), {}, l).map(describeProblem), [
    'quota "storage" has no room for requests.storage: it needs 5Gi more, and 0 of 2Gi is used',
    'quota "storage" has no room for persistentvolumeclaims: it needs 1 more, and 0 of 0 is used',
  ]);
});

test("devtool's own container: fixed values, what a quota demands added, then moved into the LimitRange's bounds", () => {
  const base = { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } };
  const whenDemanded = { limits: { cpu: '100m' } };
  assert.deepEqual(ownContainerResources(base, whenDemanded, NO_LIMITS), base, 'nothing demanded: as it is');
  const demanding = limitsOf([quota('compute', { 'limits.cpu': '4', 'limits.memory': '4Gi' })]);
  assert.deepEqual(ownContainerResources(base, whenDemanded, demanding), { requests: base.requests, limits: { memory: '64Mi', cpu: '100m' } });
  // A LimitRange that defaults the CPU limit: the API server fills it, devtool adds nothing.
  const defaulted = limitsOf([quota('compute', { 'limits.cpu': '4' })], [range('d', { type: 'Container', _default: { cpu: '200m' } })]);
  assert.deepEqual(ownContainerResources(base, whenDemanded, defaulted), base);
  const bounded = limitsOf(
    [],
    [range('b', { type: 'Container', min: { memory: '32Mi', cpu: '20m' }, max: { memory: '48Mi', cpu: '1' }, maxLimitRequestRatio: { memory: '1' } })],
  );
  const fitted = ownContainerResources(base, whenDemanded, bounded);
  assert.deepEqual(fitted, { requests: { cpu: '20m', memory: '48Mi' }, limits: { memory: '48Mi', cpu: '1' } });
  assert.deepEqual(podProblems({ containers: [container('devtool-bin', fitted)] }, bounded), [], 'what it gives is admitted');
});
