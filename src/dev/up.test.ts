import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DevState } from './local-state.ts';
import { failureLine, lockAll } from './up.ts';

test('lockAll takes every lock, or none, naming the busy one and the others', () => {
  const root = mkdtempSync(join(tmpdir(), 'up-lock-'));
  try {
    const targets = ['api', 'web', 'db'].map((devName) => ({ devName, state: new DevState(join(root, devName)) }));
    // Another live process (this test's parent) holds web.
    const other = process.ppid;
    targets[1]!.state.lock('web', other);
    const refusal =
      `'devtool up' is already running for web from this folder (pid ${other}); use that session, or stop it first; ` +
      `bring up the others one by one ('devtool up api', 'devtool up db')`;
    assert.throws(() => lockAll(targets), { message: refusal });
    assert.equal(targets[0]!.state.holder(), undefined, 'the lock taken before the busy one is given back');
    assert.equal(targets[2]!.state.holder(), undefined);
    rmSync(targets[1]!.state.pidFile);
    const releases = lockAll(targets);
    assert.deepEqual(
      targets.map((t) => t.state.holder()),
      [process.pid, process.pid, process.pid],
    );
    for (const release of releases) release();
    assert.deepEqual(
      targets.map((t) => t.state.holder()),
      [undefined, undefined, undefined],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('failureLine: which, why, and what is left, in one line', () => {
  assert.equal(
    failureLine([{ name: 'ghost', message: 'no deployment ghost' }], ['api', 'web'], []),
    "dev container ghost did not come up: no deployment ghost; restored api, web (nothing this 'up' activated is left)",
  );
  assert.equal(
    failureLine(
      [
        { name: 'a', message: 'x' },
        { name: 'b', message: 'y' },
      ],
      [],
      ['c'],
    ),
    "dev containers a, b did not come up: a: x (the lines above say the others'); nothing this 'up' activated is left; c stays active as before",
  );
});
