import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { ENVIRONMENT_LABEL, MANAGED_BY_LABEL, SERVICE_LABEL } from '../kube/labels.ts';
import { objectsToYaml } from '../kube/manifest-yaml.ts';
import { LocatedError } from '../yaml/errors.ts';
import { loadCompose } from './load.ts';
import type { ComposeProject, ComposeService } from './model.ts';
import { translateCompose, type TranslateOptions } from './translate.ts';

function project(text: string): ComposeProject {
  return loadCompose({ cwd: '/p', files: ['compose.yaml'], env: {}, fileAccess: { readFile: (p) => (p === '/p/compose.yaml' ? text : undefined) } });
}
const options: TranslateOptions = { name: 'env', namespace: 'ns', endpointDomain: 'example.com' };

const sample = `services:
  web:
    build: .
    ports: ["8080:80"]
    volumes: [data:/data]
    depends_on: [db]
  db:
    image: postgres
    ports: [5432]
    volumes: [/var/lib/postgresql/data]
  migrate:
    image: app
    restart: "no"
volumes:
  data: {}
endpoints:
  api: [{path: /, service: web, port: 80}]
`;

test('every object carries the environment labels; the objects and pods of a service its service label', () => {
  const t = translateCompose(project(sample), { ...options, images: { web: 'web:1' } });
  for (const o of t.objects) {
    assert.equal(o.metadata.labels?.[ENVIRONMENT_LABEL], 'env', `${o.kind}/${o.metadata.name}`);
    assert.equal(o.metadata.labels?.[MANAGED_BY_LABEL], 'devtool');
    if (o.kind === 'Deployment' || o.kind === 'StatefulSet' || o.kind === 'Job') {
      const podLabels = o.spec?.template.metadata?.labels ?? {};
      assert.equal(podLabels[ENVIRONMENT_LABEL], 'env');
      assert.equal(podLabels[SERVICE_LABEL], o.metadata.name);
    }
    if (o.kind === 'Deployment' || o.kind === 'StatefulSet') {
      assert.deepEqual(o.spec?.selector.matchLabels, { [ENVIRONMENT_LABEL]: 'env', [SERVICE_LABEL]: o.metadata.name });
    }
    if (o.kind === 'Service') assert.deepEqual(o.spec?.selector, { [ENVIRONMENT_LABEL]: 'env', [SERVICE_LABEL]: o.metadata.name });
  }
  assert.deepEqual(
    t.objects.map((o) => `${o.kind}/${o.metadata.name}`),
    ['PersistentVolumeClaim/data', 'Service/db', 'Service/web', 'StatefulSet/db', 'StatefulSet/web', 'Job/migrate', 'Ingress/api', 'Ingress/web'],
  );
  assert.deepEqual(
    t.rollout.map((r) => r.service),
    ['db', 'migrate', 'web'],
  );
  assert.deepEqual(
    t.endpoints.map((e) => e.url),
    ['https://api-ns.example.com', 'https://web-ns.example.com'],
  );
});

test('the same file always gives the same objects, whatever the order of its services', () => {
  const a = objectsToYaml(translateCompose(project(sample), { ...options, images: { web: 'w' } }).objects);
  const b = objectsToYaml(translateCompose(project(sample), { ...options, images: { web: 'w' } }).objects);
  const reordered = sample.replace(/ {2}web:\n( {4}.*\n)+/, '').replace('  migrate:', `${/ {2}web:\n( {4}.*\n)+/.exec(sample)![0]}  migrate:`);
  assert.notEqual(reordered, sample);
  const c = objectsToYaml(translateCompose(project(reordered), { ...options, images: { web: 'w' } }).objects);
  assert.equal(a, b);
  assert.equal(a, c);
});

test('a service with a build needs the image built for it', () => {
  assert.throws(
    () => translateCompose(project(sample), options),
    (e: unknown) => e instanceof LocatedError && e.message === 'compose.yaml:3:12: service "web" has a build but no image: build it first, or give it an image',
  );
});

test('the environment name and namespace must be DNS labels', () => {
  assert.throws(
    () => translateCompose(project('services: {}\n'), { ...options, name: 'My_App' }),
    (e: unknown) => e instanceof DevtoolError && /invalid environment name "My_App"/.test(e.message),
  );
  assert.throws(() => translateCompose(project('services: {}\n'), { ...options, namespace: '' }), DevtoolError);
});

test('the endpoint domain is needed only for public endpoints, and may be written with dots around', () => {
  const privateOnly = project('services:\n  a: {image: a, ports: [80]}\n');
  assert.equal(translateCompose(privateOnly, { name: 'e', namespace: 'n' }).objects.length, 2);
  const t = translateCompose(project('services:\n  a: {image: a, ports: ["80:80"]}\n'), { ...options, endpointDomain: '.example.com.' });
  assert.deepEqual(
    t.endpoints.map((e) => e.url),
    ['https://a-ns.example.com'],
  );
});

test("with an ingress class every Ingress names it; without, none does (the cluster's default class takes it)", () => {
  const text = 'services:\n  a: {image: a, ports: ["80:80"]}\nendpoints:\n  api: [{path: /, service: a, port: 80}]\n';
  const classes = (o: TranslateOptions) =>
    translateCompose(project(text), o)
      .objects.filter((x) => x.kind === 'Ingress')
      .map((x) => [x.metadata.name, x.kind === 'Ingress' ? x.spec?.ingressClassName : undefined, x.kind === 'Ingress' ? x.spec?.tls : undefined]);
  const tls = (host: string) => [{ hosts: [host] }];
  assert.deepEqual(classes({ ...options, ingressClass: 'traefik' }), [
    ['a', 'traefik', tls('a-ns.example.com')],
    ['api', 'traefik', tls('api-ns.example.com')],
  ]);
  assert.deepEqual(classes(options), [
    ['a', undefined, tls('a-ns.example.com')],
    ['api', undefined, tls('api-ns.example.com')],
  ]);
});

test('two public endpoints of the same name are an error', () => {
  const text = 'services:\n  web: {image: a, ports: ["80:80"]}\nendpoints:\n  web: [{path: /, service: web, port: 80}]\n';
  assert.throws(
    () => translateCompose(project(text), options),
    (e: unknown) => e instanceof LocatedError && /the public endpoint "web" is defined twice \(also at compose\.yaml:4:3\)/.test(e.message),
  );
});

test('long hosts are refused before the API server would', () => {
  const t = () => translateCompose(project('services:\n  a: {image: a, ports: ["80:80"]}\n'), { ...options, namespace: 'n'.repeat(62) });
  assert.throws(t, (e: unknown) => e instanceof LocatedError && /longer than 63 characters/.test(e.message));
});

test('rollout says how each service is awaited', () => {
  const t = translateCompose(
    project(
      'services:\n  a: {image: a, ports: [80, "53/udp"], healthcheck: {test: "true"}}\n' +
        '  b: {image: b, expose: [9000], depends_on: {a: {condition: service_healthy}}}\n',
    ),
    options,
  );
  assert.deepEqual(t.rollout, [
    { service: 'a', kind: 'Deployment', name: 'a', replicas: 1, dependsOn: [], healthyBy: 'probe', tcpPorts: [80] },
    {
      service: 'b',
      kind: 'Deployment',
      name: 'b',
      replicas: 1,
      dependsOn: [{ service: 'a', condition: 'service_healthy', required: true }],
      healthyBy: 'tcp',
      tcpPorts: [9000],
    },
  ]);
});

test('rollout orders 20,000 services in a dependency chain in well under seconds, ties by name', () => {
  const one = project('services:\n  a: {image: a}\n');
  const base = one.services[0]!;
  const n = 20_000;
  const name = (i: number) => `s${String(i).padStart(5, '0')}`;
  // s00000 depends on s00001, which depends on s00002...: the one ready service is always the last
  // one left by name, so a rollout that scans the services for each step is quadratic or worse.
  const services: ComposeService[] = Array.from({ length: n }, (_, i) => ({
    ...base,
    name: name(i),
    dependsOn: i + 1 < n ? [{ service: name(i + 1), condition: 'service_started' as const, required: true, pos: base.pos }] : [],
  }));
  // Two independent ones, ready from the start: they come first, by name.
  services.push({ ...base, name: 'b' }, { ...base, name: 'a' });
  const start = performance.now();
  const t = translateCompose({ ...one, services }, options);
  const ms = performance.now() - start;
  assert.deepEqual(
    t.rollout.slice(0, 4).map((r) => r.service),
    ['a', 'b', 's19999', 's19998'],
  );
  assert.equal(t.rollout.at(-1)?.service, 's00000');
  assert.equal(t.rollout.length, n + 2);
  assert.ok(ms < 5000, `translation took ${Math.round(ms)} ms`);
});
