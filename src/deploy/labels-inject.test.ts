import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import { injectEnvironmentLabel, labelBody, labelledBodyFormat } from './labels-inject.ts';
import { proxyKubeconfig } from './label-proxy.ts';

const L = 'devtool.dev/environment';

test('which requests carry an object to label', () => {
  const json = 'application/json';
  assert.equal(labelledBodyFormat('POST', '/api/v1/namespaces/ns/configmaps', json), 'json');
  assert.equal(labelledBodyFormat('PUT', '/apis/apps/v1/namespaces/ns/deployments/web?fieldManager=kubectl', json), 'json');
  assert.equal(labelledBodyFormat('PATCH', '/apis/apps/v1/namespaces/ns/deployments/web', 'application/strategic-merge-patch+json'), 'json');
  assert.equal(labelledBodyFormat('PATCH', '/apis/apps/v1/namespaces/ns/deployments/web', 'application/merge-patch+json; charset=utf-8'), 'json');
  assert.equal(labelledBodyFormat('PATCH', '/api/v1/namespaces/ns/secrets/s?fieldManager=helm', 'application/apply-patch+yaml'), 'yaml');
  // Passed through unchanged:
  assert.equal(labelledBodyFormat('GET', '/api/v1/namespaces/ns/configmaps', json), undefined);
  assert.equal(labelledBodyFormat('DELETE', '/api/v1/namespaces/ns/configmaps/c', json), undefined);
  assert.equal(labelledBodyFormat('POST', '/api/v1/namespaces', json), undefined, 'cluster-scoped');
  assert.equal(labelledBodyFormat('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', json), undefined, 'cluster-scoped');
  assert.equal(labelledBodyFormat('PUT', '/apis/apps/v1/namespaces/ns/deployments/web/scale', json), undefined, 'subresource');
  assert.equal(labelledBodyFormat('POST', '/api/v1/namespaces/ns/pods/p/exec', json), undefined, 'subresource');
  assert.equal(labelledBodyFormat('PATCH', '/api/v1/namespaces/ns/configmaps/c', 'application/json-patch+json'), undefined, 'JSON patch');
  assert.equal(labelledBodyFormat('POST', '/api/v1/namespaces/ns/configmaps', 'application/vnd.kubernetes.protobuf'), 'protobuf');
  assert.equal(labelledBodyFormat('PUT', '/api/v1/namespaces/ns/configmaps/c', 'application/vnd.kubernetes.protobuf'), 'protobuf', 'create on update');
  assert.equal(labelledBodyFormat('PATCH', '/api/v1/namespaces/ns/configmaps/c', 'application/vnd.kubernetes.protobuf'), undefined, 'never a patch');
  assert.equal(labelledBodyFormat('POST', '/api/v1/namespaces', 'application/vnd.kubernetes.protobuf'), undefined, 'cluster-scoped');
});

test('objects and their pod templates get the label; other labels stay', () => {
  const d = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: {} } },
  };
  assert.ok(injectEnvironmentLabel(d, 'shop'));
  assert.deepEqual(d.metadata.labels, { app: 'web', [L]: 'shop' });
  assert.deepEqual(d.spec.template.metadata.labels, { app: 'web', [L]: 'shop' });
  assert.deepEqual(d.spec.selector, { matchLabels: { app: 'web' } }, 'selectors are immutable: never touched');

  const cm: Record<string, unknown> = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
  injectEnvironmentLabel(cm, 'shop');
  assert.deepEqual(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { [L]: 'shop' } } });

  const cron = { kind: 'CronJob', spec: { jobTemplate: { spec: { template: { spec: {} } } } } };
  injectEnvironmentLabel(cron, 'e');
  assert.equal((cron.spec.jobTemplate as { metadata?: { labels: Record<string, string> } }).metadata?.labels[L], 'e');
  assert.equal((cron.spec.jobTemplate.spec.template as { metadata?: { labels: Record<string, string> } }).metadata?.labels[L], 'e');

  const patch = { spec: { replicas: 2 } };
  injectEnvironmentLabel(patch, 'e');
  assert.deepEqual(patch, { spec: { replicas: 2 }, metadata: { labels: { [L]: 'e' } } }, 'no pod template made up for a patch without one');

  const list = { kind: 'List', items: [{ kind: 'Service', metadata: { name: 's' } }] };
  injectEnvironmentLabel(list, 'e');
  assert.equal(list.items[0]!.metadata.name, 's');
  assert.deepEqual((list.items[0]!.metadata as { labels?: unknown }).labels, { [L]: 'e' });
  assert.equal((list as { metadata?: unknown }).metadata, undefined);
});

test('bodies: JSON, YAML for server-side apply, unreadable ones left alone', () => {
  const json = labelBody('{"kind":"Secret","metadata":{"name":"s"}}', 'json', 'e', parse);
  assert.deepEqual(JSON.parse(json!), { kind: 'Secret', metadata: { name: 's', labels: { [L]: 'e' } } });
  const yaml = labelBody('kind: ConfigMap\nmetadata:\n  name: c\n', 'yaml', 'e', parse);
  assert.deepEqual(JSON.parse(yaml!), { kind: 'ConfigMap', metadata: { name: 'c', labels: { [L]: 'e' } } });
  assert.equal(labelBody('kind: x', 'json', 'e', parse), undefined, 'YAML is not accepted as JSON');
  assert.equal(labelBody('[1,2]', 'json', 'e', parse), undefined);
  assert.equal(labelBody('{', 'json', 'e', parse), undefined);
});

test('the commands kubeconfig points at the proxy with the token and namespace', () => {
  const kc = JSON.parse(proxyKubeconfig('http://127.0.0.1:5555', 'tok', 'kind-dev', 'team'));
  assert.equal(kc['current-context'], 'kind-dev');
  assert.equal(kc.clusters[0].cluster.server, 'http://127.0.0.1:5555/tok', 'client-go sends no bearer token over plain HTTP: the path carries it');
  assert.equal(kc.users[0].user.token, 'tok');
  assert.equal(kc.contexts[0].context.namespace, 'team');
});
