import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cronJobPatch, notYetAvailable, REPLICAS_BEFORE_SLEEP, SUSPEND_BEFORE_SLEEP, scalePatch } from './scaling.ts';

test('sleep keeps the replicas in an annotation; wake restores them; others are left alone', () => {
  assert.deepEqual(scalePatch({ spec: { replicas: 3 } }, 'sleep'), { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: '3' } }, spec: { replicas: 0 } });
  assert.deepEqual(scalePatch({ spec: {} }, 'sleep'), { metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: '1' } }, spec: { replicas: 0 } }, 'unset is 1');
  assert.equal(scalePatch({ spec: { replicas: 0 } }, 'sleep'), undefined, 'already at zero: nothing to keep');
  assert.equal(
    scalePatch({ metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: '3' } }, spec: { replicas: 0 } }, 'sleep'),
    undefined,
    'asleep already: the kept count stays',
  );
  assert.deepEqual(scalePatch({ metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: '3' } }, spec: { replicas: 0 } }, 'wake'), {
    metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: null } },
    spec: { replicas: 3 },
  });
  assert.equal(scalePatch({ spec: { replicas: 0 } }, 'wake'), undefined, 'never asleep: left at zero');
  assert.equal(scalePatch({ metadata: { annotations: { [REPLICAS_BEFORE_SLEEP]: 'x' } } }, 'wake'), undefined);
});

test('a CronJob is suspended for the sleep and gets its own suspend back on the wake', () => {
  const kept = (v: string) => ({ metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: v } } });
  assert.deepEqual(cronJobPatch({ spec: {} }, 'sleep'), { metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: 'false' } }, spec: { suspend: true } });
  assert.deepEqual(cronJobPatch({ spec: { suspend: false } }, 'sleep'), {
    metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: 'false' } },
    spec: { suspend: true },
  });
  assert.deepEqual(
    cronJobPatch({ spec: { suspend: true } }, 'sleep'),
    { metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: 'true' } }, spec: { suspend: true } },
    "suspended by its owner: kept as the owner's",
  );
  assert.equal(cronJobPatch({ ...kept('false'), spec: { suspend: true } }, 'sleep'), undefined, 'asleep already: the kept value is not overwritten');
  assert.deepEqual(cronJobPatch({ ...kept('false'), spec: { suspend: false } }, 'sleep'), { spec: { suspend: true } }, 'resumed meanwhile: suspended again');

  assert.deepEqual(cronJobPatch({ ...kept('false'), spec: { suspend: true } }, 'wake'), {
    metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: null } },
    spec: { suspend: false },
  });
  assert.deepEqual(cronJobPatch({ ...kept('true'), spec: { suspend: true } }, 'wake'), {
    metadata: { annotations: { [SUSPEND_BEFORE_SLEEP]: null } },
    spec: { suspend: true },
  });
  assert.equal(cronJobPatch({ spec: { suspend: true } }, 'wake'), undefined, 'never put to sleep: left as it is');
  assert.equal(cronJobPatch({ ...kept('yes'), spec: { suspend: true } }, 'wake'), undefined, 'a mark that is not ours: left alone');
});

test('a workload is available once every wanted replica is, in its current generation', () => {
  const w = (replicas: number | undefined, available: number | undefined, generation = 1, observed = 1) => ({
    metadata: { name: 'web', generation },
    spec: replicas === undefined ? {} : { replicas },
    status: { ...(available === undefined ? {} : { availableReplicas: available }), observedGeneration: observed },
  });
  assert.equal(notYetAvailable(w(2, 2)), undefined);
  assert.equal(notYetAvailable(w(0, undefined)), undefined, 'scaled to zero: nothing to wait for');
  assert.equal(notYetAvailable(w(2, 1)), 'web 1/2');
  assert.equal(notYetAvailable(w(undefined, undefined)), 'web 0/1', 'unset replicas are 1');
  assert.equal(notYetAvailable(w(2, 2, 3, 2)), 'web 2/2', 'the controller has not seen the wake yet');
});
