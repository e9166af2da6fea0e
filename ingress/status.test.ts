import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Ingress } from '@kubernetes/client-node';
import { statusUpdates } from './status.ts';

const settings = {
  className: 'devtool',
  acceptWithoutClass: false,
  adminListen: 'unix//s',
  caCertFile: '/c',
  caKeyFile: '/k',
  endpointDomain: 'devtool.test',
  allowedHosts: {},
};
const ing = (name: string, cls: string, ips: string[]): V1Ingress => ({
  metadata: { name, namespace: 'n' },
  spec: { ingressClassName: cls },
  status: { loadBalancer: { ingress: ips.map((ip) => ({ ip })) } },
});

test('served Ingresses get the node address once; unserved ones of ours lose it; others are left alone', () => {
  const list = [
    ing('new', 'devtool', []),
    ing('done', 'devtool', ['192.0.2.2']),
    ing('moved', 'devtool', ['192.0.2.9']),
    ing('refused', 'devtool', ['192.0.2.2']),
    ing('refused-elsewhere', 'devtool', ['198.51.100.1']),
    ing('other-class', 'nginx', ['198.51.100.1']),
  ];
  const updates = statusUpdates(list, ['n/new', 'n/done', 'n/moved', 'n/other-class'], ['192.0.2.2'], settings);
  assert.deepEqual(
    updates.map((u) => [u.ingress.metadata?.name, u.loadBalancer]),
    [
      ['new', [{ ip: '192.0.2.2' }]],
      ['moved', [{ ip: '192.0.2.2' }]],
      ['refused', []],
    ],
  );
});

test('with a front door on several nodes, a served Ingress shows every node once, in order', () => {
  const list = [ing('one-node', 'devtool', ['192.0.2.2']), ing('both', 'devtool', ['192.0.2.3', '192.0.2.2']), ing('refused', 'devtool', ['192.0.2.3'])];
  const updates = statusUpdates(list, ['n/one-node', 'n/both'], ['192.0.2.3', '192.0.2.2'], settings);
  assert.deepEqual(
    updates.map((u) => [u.ingress.metadata?.name, u.loadBalancer]),
    [
      ['one-node', [{ ip: '192.0.2.2' }, { ip: '192.0.2.3' }]],
      ['refused', []],
    ],
  );
});
