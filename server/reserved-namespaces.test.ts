import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reservedNamespaceReason } from './reserved-namespaces.ts';

test("Kubernetes' names, the service's namespace and the operator's names and prefixes are reserved", () => {
  const config = { serviceNamespace: 'devtool', reservedNamespaces: ['monitoring', 'istio-*'] };
  for (const name of ['kube-system', 'kube-foo', 'default', 'devtool', 'monitoring', 'istio-system', 'istio-']) {
    assert.ok(reservedNamespaceReason(config, name), `${name} is free`);
  }
  assert.match(reservedNamespaceReason(config, 'istio-ingress') ?? '', /^on the operator's list: istio-\*$/);
  for (const name of ['kubernetes', 'defaults', 'devtool-2', 'monitoring-team', 'team-istio', 'web']) {
    assert.equal(reservedNamespaceReason(config, name), undefined, name);
  }
  assert.equal(reservedNamespaceReason({}, 'devtool'), undefined);
});
