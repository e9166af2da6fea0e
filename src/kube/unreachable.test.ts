import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeUnreachable } from './unreachable.ts';

const refused = 'request to https://127.0.0.1:1/api/v1/namespaces/default failed, reason: connect ECONNREFUSED 127.0.0.1:1';

test('a failed request to the API server names the server, why in plain words, and what to check', () => {
  assert.equal(
    describeUnreachable(refused),
    'cannot reach the Kubernetes API server https://127.0.0.1:1 (connection refused) in namespace default: ' +
      'check that the cluster is running and that the server of the context in the kubeconfig (KUBECONFIG) is right',
  );
  // Wrapped in a command's own words: they say what it was doing.
  assert.match(describeUnreachable(`cannot read namespace default: ${refused}`)!, /\(connection refused\) to read namespace default: check /);
  assert.match(describeUnreachable(`applying objects; ${refused}`)!, /\(connection refused; applying objects\) in namespace default: check /);
  assert.match(
    describeUnreachable('request to https://k8s.invalid:6443/apis/apps/v1/deployments failed, reason: getaddrinfo ENOTFOUND k8s.invalid')!,
    /^cannot reach the Kubernetes API server https:\/\/k8s\.invalid:6443 \(host not found\)/,
  );
  // Not the Kubernetes API: the server alone.
  assert.match(
    describeUnreachable('request to http://registry.local:5000/v2/ failed, reason: connect ECONNREFUSED')!,
    /^cannot reach http:\/\/registry\.local:5000 \(/,
  );
});

test('any other message is left alone', () => {
  assert.equal(describeUnreachable('deployments.apps "web" not found'), undefined);
  assert.equal(describeUnreachable('ECONNREFUSED'), undefined);
});

test('a server that never answers: the timeout as the request said it, and the network to check', () => {
  const silent =
    'request to https://10.9.0.1:6443/api/v1/namespaces/shop/services failed, reason: no TLS handshake within 10s; DEVTOOL_CONNECT_TIMEOUT sets the wait';
  assert.equal(
    describeUnreachable(silent),
    'cannot reach the Kubernetes API server https://10.9.0.1:6443 (no TLS handshake within 10s; DEVTOOL_CONNECT_TIMEOUT sets the wait) in namespace shop: ' +
      'check that the cluster is running, that the network to it (a VPN) is up, and that the server of the context in the kubeconfig (KUBECONFIG) is right',
  );
});
