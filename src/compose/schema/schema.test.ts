import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { formatProblem } from '../../yaml/errors.ts';
import { parseYaml } from '../../yaml/parse.ts';
import { schemaFingerprint } from './compile.ts';
import { extendComposeSchema } from './extend.ts';
import { composeSchemaSource } from './source.ts';
import { validateComposeSchema } from './validate.ts';

const generated = readFileSync(new URL('./validate.generated.cjs', import.meta.url), 'utf8');

test('the precompiled validator matches the schema and its extensions', () => {
  const header = /^\/\/ fingerprint: (\w+)$/m.exec(generated)?.[1];
  assert.equal(header, schemaFingerprint(), 'validate.generated.cjs is stale: run node --import tsx scripts/compile-compose-schema.ts');
  assert.ok(generated.includes(`${composeSchemaSource.module}@${composeSchemaSource.version}`));
});

test('the upstream schema is the pinned one, unmodified (extensions are patched at run time)', () => {
  const upstream = JSON.parse(readFileSync(new URL('./compose-spec.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  assert.equal((upstream['properties'] as Record<string, unknown>)['endpoints'], undefined);
  assert.ok((extendComposeSchema()['properties'] as Record<string, unknown>)['endpoints']);
});

function problems(text: string): string[] {
  const r = parseYaml(text, 'c.yaml');
  return validateComposeSchema(r.value, r.sources).map(formatProblem).sort();
}

test('the devtool extensions and x- keys are valid', () => {
  const text = `
x-common: &c {restart: always}
services:
  web:
    <<: *c
    image: web
    x-note: anything
    stop_grace_period: 30
    healthcheck:
      http: {path: /healthz, port: 8080}
    deploy:
      resources:
        limits: {cpu: 500m, memory: 256Mi}
    build: {context: ., export_cache: registry/cache:web}
volumes:
  data:
    driver_opts: {size: 5Gi, class: fast}
endpoints:
  - {path: /, service: web, port: 8080}
`;
  assert.deepEqual(problems(text), []);
  assert.deepEqual(problems('services: {}\nendpoints:\n  labels: {a: b}\n  rules: [{path: /, service: web, port: 80}]\n'), []);
  assert.deepEqual(problems('services: {}\nendpoints:\n  api: [{path: /, service: web, port: 80}]\n'), []);
});

test('schema errors are worded for people and located', () => {
  const text = `services:
  web:
    image: [not, a, string]
    ports: [true]
    environment: 5
    depends_on:
      db: {conditon: service_healthy}
    volumes:
      - {type: volum, target: /x}
    healthcheck:
      http: {path: /}
  "bad name":
    image: x
volumes:
  data:
    driver_opts: {size: 5}
servics: {}
`;
  assert.deepEqual(problems(text), [
    'c.yaml:11:13: field services.web.healthcheck.http: missing required field "port"',
    'c.yaml:12:3: invalid name "bad name" in services: use letters, digits, ".", "_" and "-"',
    'c.yaml:16:25: field volumes.data.driver_opts.size: must be a string',
    'c.yaml:17:1: unknown top-level key "servics" (did you mean "services"?)',
    'c.yaml:3:12: field services.web.image: must be a string',
    'c.yaml:4:13: field services.web.ports[0]: must be a number, a string or a map',
    'c.yaml:5:18: field services.web.environment: must be a map or a list',
    'c.yaml:7:12: unknown field "conditon" in services.web.depends_on.db (did you mean "condition"?)',
    'c.yaml:9:16: field services.web.volumes[0].type: must be one of bind, volume, tmpfs, cluster, npipe, image (did you mean "volume"?)',
  ]);
});
