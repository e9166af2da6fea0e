import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
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
