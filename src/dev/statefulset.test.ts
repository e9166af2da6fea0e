/** What of a StatefulSet the mirror takes (the full translation is the golden case testdata/statefulset). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import type { StatefulSetObject } from '../kube/objects.ts';
import { checkDevelopable, firstPodClaims, firstPodName, mirrorSourceSpec } from './statefulset.ts';

function sts(): StatefulSetObject {
  return parse(readFileSync(join(import.meta.dirname, 'testdata', 'statefulset', 'original.yaml'), 'utf8')) as StatefulSetObject;
}

test('the first pod is ordinal 0, or where the ordinals start', () => {
  const s = sts();
  assert.equal(firstPodName(s), 'db-0');
  s.spec!.ordinals = { start: 5 };
  assert.equal(firstPodName(s), 'db-5');
  assert.deepEqual(
    firstPodClaims(s).map((c) => c.claim),
    ['data-db-5', 'logs-db-5'],
  );
});

test("a missing claim is made as the controller makes it: the template's spec, labelled with the pod selector", () => {
  const [data] = firstPodClaims(sts());
  assert.deepEqual(data!.object, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data-db-0', labels: { tier: 'storage', app: 'db' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
});

test("the mirror's source: the template with the first pod's claims, host name and subdomain, and nothing of the StatefulSet's own", () => {
  const s = sts();
  const before = JSON.stringify(s);
  const spec = mirrorSourceSpec(s)!;
  assert.equal(JSON.stringify(s), before, 'the original is not changed');
  assert.deepEqual(Object.keys(spec).sort(), ['minReadySeconds', 'selector', 'template']);
  assert.equal(spec.template.spec!.hostname, 'db-0');
  assert.equal(spec.template.spec!.subdomain, 'db-headless');
  assert.deepEqual(
    spec.template.spec!.volumes!.map((v) => [v.name, v.persistentVolumeClaim?.claimName ?? 'other']),
    [
      ['config', 'other'],
      ['data', 'data-db-0'],
      ['logs', 'logs-db-0'],
    ],
  );
});

test('a template volume named like a claim template is replaced by the claim, as the controller does', () => {
  const s = sts();
  s.spec!.template.spec!.volumes!.push({ name: 'data', emptyDir: {} });
  const volumes = mirrorSourceSpec(s)!.template.spec!.volumes!;
  assert.deepEqual(
    volumes.filter((v) => v.name === 'data'),
    [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }],
  );
});

test('a StatefulSet that deletes its claims when scaled down is refused before anything changes', () => {
  const s = sts();
  checkDevelopable(s);
  s.spec!.persistentVolumeClaimRetentionPolicy = { whenScaled: 'Delete', whenDeleted: 'Retain' };
  assert.throws(() => checkDevelopable(s), /^DevtoolError: statefulset db deletes its claims when scaled down .*set whenScaled: Retain on it first$/);
  s.spec!.volumeClaimTemplates = [];
  checkDevelopable(s);
});
