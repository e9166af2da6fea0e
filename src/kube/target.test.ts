import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../base/errors.ts';
import type { ResolvedContext } from '../context/store.ts';
import { ingressClass } from './target.ts';

const context = (ingress?: string): ResolvedContext => ({
  name: 'https://devtool.example',
  isDevtool: true,
  namespace: 'alice-devtool',
  source: 'stored',
  host: 'devtool.example',
  ...(ingress ? { ingressClass: ingress } : {}),
});

test("ingress class: DEVTOOL_INGRESS_CLASS, else the context's, else none (the cluster's default class)", () => {
  assert.equal(ingressClass({ env: { DEVTOOL_INGRESS_CLASS: ' nginx ' } }, context('traefik')), 'nginx');
  assert.equal(ingressClass({ env: {} }, context('traefik')), 'traefik');
  assert.equal(ingressClass({ env: { DEVTOOL_INGRESS_CLASS: '' } }, context('traefik')), 'traefik');
  assert.equal(ingressClass({ env: {} }, context()), undefined);
  assert.equal(ingressClass({ env: {} }, undefined), undefined);
  assert.equal(ingressClass({ env: { DEVTOOL_INGRESS_CLASS: 'ingress.example.com' } }, undefined), 'ingress.example.com');
});

test('a DEVTOOL_INGRESS_CLASS that is no IngressClass name is a usage error naming it', () => {
  for (const bad of ['Traefik', 'my_class', '-x', 'a'.repeat(254)]) {
    assert.throws(
      () => ingressClass({ env: { DEVTOOL_INGRESS_CLASS: bad } }, context('traefik')),
      (e: unknown) => e instanceof UsageError && e.message.startsWith(`DEVTOOL_INGRESS_CLASS=${bad}: not an IngressClass name`),
    );
  }
});
