/**
 * Golden tests of the translation: each folder of testdata/ holds input.yaml (Ingresses and
 * Services, and Namespaces, as the watches give them; an optional first document `kind: Settings`
 * overrides the front door's settings) and expected.json (the Caddy configuration, hosts and problems).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { V1Ingress, V1Namespace, V1Service } from '@kubernetes/client-node';
import { assertGolden } from '../test/golden.ts';
import { restingNamespaces } from './sleeping.ts';
import { type FrontDoorSettings, pathMatchers, translate } from './translate.ts';

const testdata = join(import.meta.dirname, 'testdata');
const defaults: FrontDoorSettings = {
  className: 'devtool',
  acceptWithoutClass: true,
  adminListen: 'unix//run/caddy/admin.sock',
  caCertFile: '/ca/tls.crt',
  caKeyFile: '/ca/tls.key',
  frontDoorHost: 'devtool.devtool.test',
  endpointDomain: 'devtool.test',
  allowedHosts: {},
};

for (const name of readdirSync(testdata)) {
  test(`translate: ${name}`, () => {
    const docs = parseAllDocuments(readFileSync(join(testdata, name, 'input.yaml'), 'utf8')).map((d) => d.toJS());
    const settings = { ...defaults, ...docs.find((d) => d.kind === 'Settings')?.settings };
    const ingresses = docs.filter((d): d is V1Ingress => d.kind === 'Ingress');
    const services = docs.filter((d): d is V1Service => d.kind === 'Service');
    const resting = restingNamespaces(docs.filter((d): d is V1Namespace => d.kind === 'Namespace'));
    assertGolden(join(testdata, name, 'expected.json'), `${JSON.stringify(translate(ingresses, services, settings, resting), null, 2)}\n`);
  });
}

test('the translation does not depend on the order of the watch lists', () => {
  const docs = parseAllDocuments(readFileSync(join(testdata, 'refused', 'input.yaml'), 'utf8')).map((d) => d.toJS());
  const ingresses = docs.filter((d): d is V1Ingress => d.kind === 'Ingress');
  const services = docs.filter((d): d is V1Service => d.kind === 'Service');
  assert.deepEqual(translate([...ingresses].reverse(), [...services].reverse(), defaults), translate(ingresses, services, defaults));
});

test('Prefix paths match whole path elements, Exact the path itself', () => {
  assert.deepEqual(pathMatchers('/', 'Prefix'), ['/*']);
  assert.deepEqual(pathMatchers(undefined, 'ImplementationSpecific'), ['/*']);
  assert.deepEqual(pathMatchers('/api/', 'Prefix'), ['/api', '/api/*']);
  assert.deepEqual(pathMatchers('/api', 'Exact'), ['/api']);
});
