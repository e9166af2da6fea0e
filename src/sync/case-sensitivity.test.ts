import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isCaseSensitive, swapCase } from './case-sensitivity.ts';

test('swapCase changes every letter that has two cases, or says there is none', () => {
  assert.equal(swapCase('My-App_2'), 'mY-aPP_2');
  assert.equal(swapCase('2024'), undefined);
  assert.equal(swapCase('Ünïcode'), 'üNÏCODE');
});

test("a folder on this machine's temporary file system (Linux: case-sensitive) is found so; one with no letters is not known", () => {
  const root = mkdtempSync(join(tmpdir(), 'devtool-case-'));
  try {
    mkdirSync(join(root, 'Project'));
    mkdirSync(join(root, '1234'));
    assert.equal(isCaseSensitive(join(root, 'Project')), process.platform === 'linux');
    assert.equal(isCaseSensitive(join(root, '1234')), false);
    if (process.platform === 'linux') {
      // Both spellings present: two entries, so the file system tells them apart.
      mkdirSync(join(root, 'pROJECT'));
      assert.equal(isCaseSensitive(join(root, 'Project')), true);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
