import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { age, previewName } from './run.ts';

test('a preview is named by the user, else after the repository and the branch', () => {
  assert.equal(previewName('pr-7', undefined, undefined), 'pr-7');
  assert.throws(() => previewName('PR_7', undefined, undefined), /invalid preview name "PR_7": lowercase letters/);
  assert.throws(() => previewName('a'.repeat(64), undefined, undefined), /at most 63/);
  assert.equal(previewName(undefined, 'https://git.example.com/acme/Shop.git', 'feature/Login'), 'shop-feature-login');
  assert.equal(previewName(undefined, 'https://git.example.com/acme/shop', undefined), 'shop');
  assert.equal(previewName(undefined, 'https://x.example/a', 'b'.repeat(80)).length, 63);

  const checkout = mkdtempSync(join(tmpdir(), 'preview-name-'));
  mkdirSync(join(checkout, '.git'));
  writeFileSync(join(checkout, '.git', 'config'), '[remote "origin"]\n\turl = https://git.example.com/acme/movies.git\n');
  writeFileSync(join(checkout, '.git', 'HEAD'), 'ref: refs/heads/fix-42\n');
  assert.equal(previewName(undefined, undefined, undefined, checkout), 'movies-fix-42');
  assert.throws(() => previewName(undefined, undefined, undefined, mkdtempSync(join(tmpdir(), 'no-git-'))), /no preview name.*pass the name/);
  // The example is the command that was run.
  assert.throws(
    () => previewName(undefined, undefined, undefined, mkdtempSync(join(tmpdir(), 'no-git-')), 'preview endpoints'),
    /e\.g\. devtool preview endpoints my-preview$/,
  );
});

test('ages read like kubectl', () => {
  assert.deepEqual([age(5_000), age(125_000), age(3 * 3_600_000), age(50 * 3_600_000)], ['5s', '2m', '3h', '2d']);
});
