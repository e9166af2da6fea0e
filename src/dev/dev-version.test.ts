import assert from 'node:assert/strict';
import { test } from 'node:test';
import { devVersionRule } from './dev-version.ts';

test('the same version: up drives the dev pod as it is', () => {
  assert.deepEqual(devVersionRule('web', '0.2.0', '0.2.0'), { kind: 'same' });
  assert.deepEqual(devVersionRule('web', '0.2.0-rc.1', '0.2.0-rc.1'), { kind: 'same' });
});

test('an older version, or none recorded (0.1.0): up replaces the dev pod and says so', () => {
  assert.deepEqual(devVersionRule('web', '0.1.0', '0.2.0'), {
    kind: 'replace',
    step: 'dev container web was started by devtool 0.1.0: its pod is replaced by one of devtool 0.2.0 (its volume and synced files stay)',
  });
  assert.equal(devVersionRule('web', undefined, '0.2.0').kind, 'replace');
  assert.match((devVersionRule('web', undefined, '0.2.0') as { step: string }).step, /started by devtool 0\.1\.0:/);
  assert.equal(devVersionRule('web', '0.2.0-rc.3', '0.2.0').kind, 'replace');
  assert.equal(devVersionRule('web', undefined, '0.1.0').kind, 'same');
});

test('a version this CLI cannot order (a build of a checkout) is replaced, never refused', () => {
  assert.equal(devVersionRule('web', 'main-1a2b3c', '0.2.0').kind, 'replace');
  assert.equal(devVersionRule('web', '0.3.0', 'dev').kind, 'replace');
});

test('a newer version: up refuses in one line naming what to install or run', () => {
  assert.deepEqual(devVersionRule('api', '0.3.0', '0.2.0'), {
    kind: 'refuse',
    error:
      'dev container api was started by devtool 0.3.0, newer than this CLI (0.2.0): install devtool 0.3.0 to go on with it, ' +
      "or run 'devtool down api' and then 'devtool up api' to start it again with this one",
  });
  assert.equal(devVersionRule('api', '0.2.0', '0.2.0-rc.1').kind, 'refuse');
});
