import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeKubeAnswer, type KubeAnswer, requestWords } from './answer.ts';

const server = 'https://127.0.0.1:6443';
const forbidden = JSON.stringify({
  kind: 'Status',
  status: 'Failure',
  reason: 'Forbidden',
  code: 403,
  message:
    'ingresses.networking.k8s.io is forbidden: User "system:serviceaccount:devtool:user-ann" cannot list resource "ingresses" ' +
    'in API group "networking.k8s.io" in the namespace "bob"',
});

const answer = (o: Partial<KubeAnswer>): KubeAnswer => ({
  method: 'GET',
  url: `${server}/apis/networking.k8s.io/v1/namespaces/bob/ingresses`,
  status: 403,
  statusText: 'Forbidden',
  contentType: 'application/json',
  body: forbidden,
  context: { name: 'https://devtool.example', isDevtool: true },
  ...o,
});

test('a 403 says what was refused, to whom, and what to do', () => {
  assert.equal(
    describeKubeAnswer(answer({})),
    `the Kubernetes API server ${server} refused to list ingresses in namespace bob to system:serviceaccount:devtool:user-ann (403 Forbidden): ` +
      "ask the owner of namespace bob for access, or use a namespace of yours (--namespace, or 'devtool namespace use <name>')",
  );
  assert.match(describeKubeAnswer(answer({ context: { name: 'kind-x', isDevtool: false } })), /use a namespace of yours \(--namespace\)$/);
});

test('a 401 points at the credentials of the context', () => {
  const body = JSON.stringify({ kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' });
  assert.equal(
    describeKubeAnswer(answer({ status: 401, body })),
    `the Kubernetes API server ${server} did not accept the credentials of context https://devtool.example (401 Unauthorized) ` +
      'to list ingresses in namespace bob: ' +
      "log in again with 'devtool context use https://devtool.example'",
  );
  assert.match(
    describeKubeAnswer(answer({ status: 401, body, context: { name: 'kind-x', isDevtool: false } })),
    /check the user of context kind-x in the kubeconfig/,
  );
});

test('an answer that is no Kubernetes Status comes from a server that is not an API server', () => {
  const line = describeKubeAnswer(
    answer({
      status: 404,
      statusText: 'Not Found',
      contentType: 'text/html',
      body: '<html>\n<h1>nope</h1></html>',
      context: { name: 'web', isDevtool: false },
    }),
  );
  assert.equal(
    line,
    `${server} is not a Kubernetes API server, or something in front of it refused: ` +
      'it answered 404 Not Found to GET /apis/networking.k8s.io/v1/namespaces/bob/ingresses: ' +
      'check the server of context web in the kubeconfig (KUBECONFIG)',
  );
  assert.match(describeKubeAnswer(answer({ status: 200, statusText: 'OK', contentType: 'text/html', body: '<html/>' })), /answered 200 OK with an HTML page/);
});

test('other refusals and failures keep the server message, on one line', () => {
  const body = JSON.stringify({ kind: 'Status', reason: 'Invalid', message: 'Deployment.apps "web" is invalid:\n spec.replicas: must be >= 0' });
  assert.equal(
    describeKubeAnswer(answer({ method: 'PATCH', url: `${server}/apis/apps/v1/namespaces/shop/deployments/web?fieldManager=devtool`, status: 422, body })),
    `the Kubernetes API server ${server} refused to change deployments/web in namespace shop (422 Invalid): ` +
      'Deployment.apps "web" is invalid: spec.replicas: must be >= 0',
  );
  assert.match(
    describeKubeAnswer(answer({ status: 500, statusText: 'Internal Server Error', body: JSON.stringify({ kind: 'Status', message: 'etcd down' }) })),
    / failed to list ingresses .*\(500 Internal Server Error\): etcd down$/,
  );
});

test('request words: the verb of the method, the object, its namespace', () => {
  const w = (method: string, path: string) => requestWords(method, new URL(`${server}${path}`)).words;
  assert.equal(w('GET', '/api/v1/namespaces/a/pods/p/log'), 'read pods/p/log in namespace a');
  assert.equal(w('GET', '/api/v1/namespaces/a'), 'read namespaces/a');
  assert.equal(w('GET', '/api/v1/namespaces/a/pods?watch=true'), 'watch pods in namespace a');
  assert.equal(w('POST', '/api/v1/namespaces'), 'create namespaces');
  assert.equal(w('DELETE', '/apis/apps/v1/namespaces/a/deployments/web'), 'delete deployments/web in namespace a');
  assert.equal(w('GET', '/healthz'), 'GET /healthz');
});
