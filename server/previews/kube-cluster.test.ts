import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REPLICAS_BEFORE_SLEEP, scalePatch } from './kube-cluster.ts';

test('sleep keeps the replicas in an annotation; wake restores them; others are left alone', () => {
  assert.deepEqual(scalePatch({ spec: { replicas: 3 } }, 'sleep'), { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: '3' } }, spec: { replicas: 0 } });
  assert.deepEqual(scalePatch({ spec: {} }, 'sleep'), { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: '1' } }, spec: { replicas: 0 } }, 'unset is 1');
  assert.equal(scalePatch({ spec: { replicas: 0 } }, 'sleep'), undefined, 'already at zero: nothing to keep');
  assert.deepEqual(scalePatch({ metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: '3' } }, spec: { replicas: 0 } }, 'wake'), {
    metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: null } },
    spec: { replicas: 3 },
  });
  assert.equal(scalePatch({ spec: { replicas: 0 } }, 'wake'), undefined, 'never asleep: left at zero');
  assert.equal(scalePatch({ metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: 'x' } } }, 'wake'), undefined);
});
