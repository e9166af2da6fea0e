import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { Reconciler } from './controller.ts';
import type { CaddyConfig } from './translate.ts';
import { SLEEPING_SINCE, WAKING_SINCE } from '../api/namespace-sleep.ts';

const settings = {
  className: 'devtool',
  acceptWithoutClass: true,
  adminListen: 'unix//s',
  caCertFile: '/c',
  caKeyFile: '/k',
  endpointDomain: 'devtool.test',
  allowedHosts: {},
};
const ingress = (host: string): V1Ingress => ({
  metadata: { name: host, namespace: 'n' },
  spec: { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
});
const services: V1Service[] = [{ metadata: { name: 'web', namespace: 'n' }, spec: { clusterIP: '10.96.0.5', ports: [{ port: 80 }] } }];
const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), 'condition not reached in 1 s');
};
const hostsOf = (c: CaddyConfig) => JSON.stringify(c).match(/"subjects":\[[^\]]*\]/)?.[0];

test('a burst of changes makes one push of the latest state, and readiness follows the first push', async () => {
  let list = [ingress('a-n.devtool.test')];
  const pushed: CaddyConfig[] = [];
  const published: (readonly string[])[] = [];
  let loaded = 0;
  const r = new Reconciler({
    view: { ingresses: () => list, services: () => services },
    settings,
    push: async (c) => void pushed.push(c),
    publish: async (served) => void published.push(served),
    log: () => {},
    onLoaded: () => loaded++,
    debounceMs: 20,
    resyncMs: 60_000,
  });
  r.start();
  list = [ingress('a-n.devtool.test'), ingress('b-n.devtool.test')];
  r.changed();
  r.changed();
  await until(() => pushed.length === 1);
  await new Promise((res) => setTimeout(res, 60));
  r.stop();
  assert.equal(pushed.length, 1);
  assert.equal(hostsOf(pushed[0]!), '"subjects":["a-n.devtool.test","b-n.devtool.test"]');
  assert.equal(loaded, 1);
  assert.deepEqual(published, [['n/a-n.devtool.test', 'n/b-n.devtool.test']]);
});

test('a failed push is retried and logged; readiness waits for a push that succeeds', async () => {
  let fail = 2;
  const logs: string[] = [];
  let loaded = 0;
  const r = new Reconciler({
    view: { ingresses: () => [ingress('a-n.devtool.test')], services: () => services },
    settings,
    push: async () => {
      if (fail-- > 0) throw new Error('connect ENOENT');
    },
    log: (l) => logs.push(l),
    onLoaded: () => loaded++,
    debounceMs: 1,
    retryMs: 5,
    resyncMs: 60_000,
  });
  r.start();
  await until(() => loaded === 1);
  r.stop();
  assert.equal(logs.filter((l) => l.includes('failed, retrying: connect ENOENT')).length, 2);
  assert.ok(logs.includes('serving 1 host(s): a-n.devtool.test'), logs.join('\n'));
});

test('what is not served is logged and reported once, when it appears', async () => {
  let list = [ingress('a-n.devtool.test'), ingress('github.com')];
  const logs: string[] = [];
  const reported: string[] = [];
  const r = new Reconciler({
    view: { ingresses: () => list, services: () => services },
    settings,
    push: async () => {},
    notServed: async (problems) => void reported.push(...problems.map((p) => `${p.ingress}: ${p.why}`)),
    log: (l) => logs.push(l),
    resyncMs: 60_000,
  });
  await r.reconcile();
  await r.reconcile();
  list = [...list, ingress('web-other.devtool.test')];
  await r.reconcile();
  r.stop();
  assert.deepEqual(reported, [
    "n/github.com: the host github.com is outside the endpoint domain devtool.test (the front door's CA signs names under it only)",
    "n/web-other.devtool.test: the host web-other.devtool.test is not namespace n's: its endpoints are <name>-n.devtool.test " +
      '(others only as the operator allows, ingress.allowedHosts)',
  ]);
  assert.deepEqual(
    logs.filter((l) => l.startsWith('not served: ')),
    reported.map((p) => `not served: ${p}`),
  );
});

test("a namespace's sleep and wake switch its hosts between the waking page and its backends", async () => {
  const wakingPage = { service: { namespace: 'devtool', name: 'devtool-service', port: 'http' }, key: 'k'.repeat(48) };
  const door: V1Service = {
    metadata: { name: 'devtool-service', namespace: 'devtool' },
    spec: { clusterIP: '10.96.0.2', ports: [{ name: 'http', port: 80 }] },
  };
  let annotations: Record<string, string> = {};
  const pushed: CaddyConfig[] = [];
  const logs: string[] = [];
  const r = new Reconciler({
    view: { ingresses: () => [ingress('a-n.devtool.test')], services: () => [...services, door], namespaces: () => [{ metadata: { name: 'n', annotations } }] },
    settings: { ...settings, wakingPage },
    push: async (c) => void pushed.push(c),
    log: (l) => logs.push(l),
    resyncMs: 60_000,
  });
  const dials = () => JSON.stringify(pushed.at(-1)).match(/"dial":"[^"]+"/g);
  await r.reconcile();
  assert.deepEqual(dials(), ['"dial":"10.96.0.5:80"']);
  annotations = { [SLEEPING_SINCE]: '2026-12-02T10:00:00Z' };
  await r.reconcile();
  assert.deepEqual(dials(), ['"dial":"10.96.0.2:80"']);
  annotations = { [SLEEPING_SINCE]: '2026-12-02T10:00:00Z', [WAKING_SINCE]: '2026-12-02T11:00:00Z' };
  await r.reconcile();
  assert.deepEqual(dials(), ['"dial":"10.96.0.2:80"']);
  annotations = {};
  await r.reconcile();
  r.stop();
  assert.deepEqual(dials(), ['"dial":"10.96.0.5:80"']);
  assert.deepEqual(
    logs.filter((l) => l.startsWith('sending to the waking page')),
    [
      'sending to the waking page the hosts of: n (sleeping)',
      'sending to the waking page the hosts of: n (waking)',
      'sending to the waking page the hosts of: (no namespace)',
    ],
  );
});
