import assert from 'node:assert/strict';
import { test } from 'node:test';
import { environmentLabels, environmentSelector, serviceLabels, serviceSelector } from './labels.ts';
import { isDnsLabel, isLabelValue, isQualifiedName, toDnsLabel } from './naming.ts';

test('free-form names become DNS-1035 labels', () => {
  assert.equal(toDnsLabel('my_web.app'), 'my-web-app');
  assert.equal(toDnsLabel('Worker'), 'worker');
  assert.equal(toDnsLabel('1st'), 's-1st');
  assert.equal(toDnsLabel('__'), '');
  assert.equal(toDnsLabel('a'.repeat(80)).length, 63);
  assert.ok(isDnsLabel(toDnsLabel(`x-${'-'.repeat(70)}y`)));
});

test('label and annotation names', () => {
  assert.ok(isQualifiedName('com.example.tier'));
  assert.ok(isQualifiedName('devtool.dev/environment'));
  assert.ok(!isQualifiedName('bad key'));
  assert.ok(!isQualifiedName('UPPER.example/x'));
  assert.ok(!isQualifiedName('/x'));
  assert.ok(isLabelValue(''));
  assert.ok(!isLabelValue('-x'));
});

test('the labels of an environment and of its services', () => {
  assert.deepEqual(environmentLabels('shop'), { 'devtool.dev/environment': 'shop', 'app.kubernetes.io/managed-by': 'devtool' });
  assert.deepEqual(serviceLabels('shop', 'web'), {
    'devtool.dev/environment': 'shop',
    'app.kubernetes.io/managed-by': 'devtool',
    'devtool.dev/service': 'web',
  });
  assert.deepEqual(serviceSelector('shop', 'web'), { 'devtool.dev/environment': 'shop', 'devtool.dev/service': 'web' });
  assert.equal(environmentSelector('shop'), 'devtool.dev/environment=shop');
});
