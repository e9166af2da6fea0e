import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DevState } from './local-state.ts';

test('a second up of the same dev container is refused; a stale PID file is taken over', () => {
  const state = new DevState(join(mkdtempSync(join(tmpdir(), 'devstate-')), 'k'));
  const release = state.lock('api');
  assert.throws(() => state.lock('api', process.pid + 1), /already running for api from this folder \(pid \d+\)/);
  release();
  // A process that has exited: its PID file is stale.
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
  writeFileSync(state.pidFile, `${dead}\n`);
  assert.equal(state.holder(), undefined);
  state.lock('api')();
});

test('keys are made once and reused', () => {
  const state = new DevState(join(mkdtempSync(join(tmpdir(), 'devstate-')), 'k'));
  assert.equal(state.readKeys(), undefined);
  const a = state.keys();
  assert.deepEqual(state.keys(), a);
  state.clear();
  assert.equal(state.readKeys(), undefined);
});

test("down NAME asks the up of several to let go of one dev container: it does, and that up's lock is gone", async () => {
  const state = new DevState(join(mkdtempSync(join(tmpdir(), 'devstate-')), 'k'));
  const release = state.lock('api');
  let asked = 0;
  const stop = state.onLeaveRequest(() => {
    asked++;
    release();
  });
  try {
    assert.equal(await state.askHolderToLeave({ graceMs: 5_000 }), true);
    assert.equal(asked, 1);
    assert.equal(state.holder(), undefined);
    assert.equal(existsSync(state.leaveFile), false, 'the request is taken away by the up that answered it');
  } finally {
    stop();
  }
});

test('a leave request for another process is not answered; an up that never answers keeps its lock and the request is withdrawn', async () => {
  const state = new DevState(join(mkdtempSync(join(tmpdir(), 'devstate-')), 'k'));
  const release = state.lock('api');
  let asked = 0;
  const stop = state.onLeaveRequest(() => asked++, process.pid + 1);
  try {
    assert.equal(await state.askHolderToLeave({ graceMs: 300 }), false);
    assert.equal(asked, 0);
    assert.equal(state.holder(), process.pid, 'still held');
    assert.equal(existsSync(state.leaveFile), false, 'withdrawn');
  } finally {
    stop();
    release();
  }
});

test('with no up running, there is nobody to ask', async () => {
  const state = new DevState(join(mkdtempSync(join(tmpdir(), 'devstate-')), 'k'));
  assert.equal(await state.askHolderToLeave({ graceMs: 100 }), true);
  assert.equal(existsSync(state.leaveFile), false);
});
