import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1LimitRange, V1ResourceQuota } from '@kubernetes/client-node';
import type { NamespaceLimitsApi } from '../kube/namespace-limits-api.ts';
import { namespaceLimitsOf, NO_LIMITS, type NamespaceLimits, type Usage } from '../kube/namespace-limits.ts';
import { loadManifestText } from '../manifest/load.ts';
import type { DeploymentObject } from '../kube/objects.ts';
import { buildDevObjects } from './mirror.ts';
import { checkDevPodLimits, type DevPodCheck } from './quota-check.ts';

/** The namespace's answers: which claims exist and what the replaced pods use (asked with this selector only). */
function fakeApi(o: { claims?: string[]; replaced?: Usage } = {}): NamespaceLimitsApi & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    limits: async () => NO_LIMITS,
    podsUsage: async (selector) => {
      asked.push(selector);
      assert.equal(selector, 'app=web');
      return o.replaced ?? {};
    },
    claimExists: async (name) => (o.claims ?? []).includes(name),
  };
}

const original: DeploymentObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [{ name: 'web', image: 'nginx:1', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } } }],
      },
    },
  },
};

function devObjects(manifest: string, namespaceLimits: NamespaceLimits) {
  const [devName, dev] = Object.entries(loadManifestText(manifest, '/p/devtool.yml', { cwd: '/p', env: {} }).services)[0]!;
  const objects = buildDevObjects({ ...inputs(structuredClone(original), namespaceLimits), devName, dev });
  const check: DevPodCheck = {
    devName,
    namespace: 'team',
    objects,
    devContainer: 'web',
    replacedPods: 'app=web',
    source: 'manifest',
    original: 'deployment web',
  };
  return check;
}

const limits = (quotas: V1ResourceQuota[], ranges: V1LimitRange[] = []) => namespaceLimitsOf(quotas, ranges);
const quota = (name: string, hard: Record<string, string>, used: Record<string, string>): V1ResourceQuota => ({ metadata: { name }, status: { hard, used } });
const plain = 'services:\n  web: {}\n';

test('a namespace without quotas or limit ranges is not read further', async () => {
  const api = fakeApi();
  await checkDevPodLimits(api, NO_LIMITS, devObjects(plain, NO_LIMITS));
  assert.deepEqual(api.asked, []);
});

test('pods: 1 with the original running fits, since the swap frees its pod; without it, one line naming the quota', async () => {
  const l = limits([quota('count', { pods: '1' }, { pods: '1' })]);
  await checkDevPodLimits(fakeApi({ replaced: { pods: 1 } }), l, devObjects(plain, l));
  await assert.rejects(checkDevPodLimits(fakeApi(), l, devObjects(plain, l)), {
    message:
      'dev container web cannot start in namespace team: quota "count" has no room for pods: it needs 1 more, and 1 of 1 is used; ' +
      'free room in the namespace (scale something down), or ask for a larger quota; nothing was changed',
  });
});

test("a quota that demands a CPU limit: the installer gets one, the dev container keeps the original's, so it is admitted", async () => {
  const l = limits([quota('compute', { 'limits.cpu': '4', 'limits.memory': '4Gi' }, {})]);
  const c = devObjects(plain, l);
  await checkDevPodLimits(fakeApi({ replaced: { pods: 1 } }), l, c);
  assert.equal(c.objects.deployment.spec?.template.spec?.initContainers?.[0]?.resources?.limits?.['cpu'], '100m');
});

test("the manifest's resources replace the original's: a demanded limit they lack is one line saying where to set it", async () => {
  const l = limits([quota('compute', { 'limits.memory': '4Gi' }, {})]);
  const c = devObjects('services:\n  web:\n    resources: {requests: {cpu: 1}}\n', l);
  await assert.rejects(checkDevPodLimits(fakeApi(), l, c), {
    message:
      'dev container web cannot start in namespace team: quota "compute" (limits.memory) demands a memory limit of every container, and container "web" ' +
      'names none (no LimitRange gives a default); set services.web.resources in the manifest (requests and limits of memory); nothing was changed',
  });
});

test('a LimitRange maximum below what the dev container asks is one line naming the LimitRange', async () => {
  const l = limits([], [{ metadata: { name: 'small' }, spec: { limits: [{ type: 'Container', max: { memory: '96Mi' } }] } }]);
  await assert.rejects(checkDevPodLimits(fakeApi(), l, devObjects(plain, l)), {
    message:
      'dev container web cannot start in namespace team: LimitRange "small" allows at most 96Mi of memory limit per container, and container "web" ' +
      'asks 128Mi; set services.web.resources in the manifest (requests and limits of memory); nothing was changed',
  });
});

test('the dev volume: a new claim needs room for its count and size; an existing one asks for none', async () => {
  const l = limits([quota('storage', { persistentvolumeclaims: '0' }, {})]);
  const c = devObjects(plain, l);
  await assert.rejects(checkDevPodLimits(fakeApi(), l, c), {
    message:
      'dev container web cannot start in namespace team: quota "storage" has no room for persistentvolumeclaims: it needs 1 more, and 0 of 0 is used; ' +
      'set services.web.persistentVolume.size smaller (or persistentVolume.enabled: false), or free room in the namespace; nothing was changed',
  });
  await checkDevPodLimits(fakeApi({ claims: ['web-devtool'] }), l, c);
  const size = limits([quota('storage', { 'requests.storage': '1Gi' }, {})]);
  await assert.rejects(checkDevPodLimits(fakeApi(), size, devObjects(plain, size)), {
    message: /has no room for requests\.storage: it needs 5Gi more, and 0 of 1Gi is used/,
  });
  await checkDevPodLimits(fakeApi(), size, devObjects('services:\n  web:\n    persistentVolume: {enabled: false}\n', size));
});

test("the fix names where the container's resources are set: a Compose service, or the original's pod template for a sidecar", async () => {
  const l = limits([quota('compute', { 'limits.memory': '4Gi', 'requests.cpu': '4' }, {})]);
  const withSidecar = structuredClone(original);
  withSidecar.spec!.template.spec!.containers.push({ name: 'proxy', image: 'envoy:1' });
  const c = devObjects(plain, l);
  const sidecar = buildDevObjects(inputs(withSidecar, l));
  await assert.rejects(checkDevPodLimits(fakeApi(), l, { ...c, objects: sidecar }), {
    message:
      'dev container web cannot start in namespace team: quota "compute" (limits.memory, requests.cpu) demands a memory limit and a cpu request of ' +
      'every container, and container "proxy" names neither (no LimitRange gives a default); set it in the pod template of deployment web ' +
      '(container "proxy"); nothing was changed',
  });
  const bare = structuredClone(original);
  delete bare.spec!.template.spec!.containers[0]!.resources;
  await assert.rejects(checkDevPodLimits(fakeApi(), l, { ...c, source: 'compose', objects: buildDevObjects(inputs(bare, l)) }), {
    message:
      'dev container web cannot start in namespace team: quota "compute" (limits.memory, requests.cpu) demands a memory limit and a cpu request of ' +
      'every container, and container "web" names neither (no LimitRange gives a default); set deploy.resources of service web in the Compose ' +
      'file (reservations and limits of memory and cpus); nothing was changed',
  });
});

function inputs(from: DeploymentObject, namespaceLimits: NamespaceLimits) {
  const [devName, dev] = Object.entries(loadManifestText(plain, '/p/devtool.yml', { cwd: '/p', env: {} }).services)[0]!;
  return {
    original: from,
    devName,
    dev,
    environment: 'shop',
    extraEnv: {},
    agentImage: 'localhost:5000/devtool-bin:0.1.0',
    folder: '0123456789abcdef',
    devtoolVersion: '0.1.0',
    hostPrivateKey: 'HOST',
    clientPublicKey: 'CLIENT',
    namespaceLimits,
  };
}
