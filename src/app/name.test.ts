import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { currentBranch, environmentName, repositoryName, sanitizeName } from './name.ts';

test('sanitizes to a DNS-1123 label', () => {
  assert.equal(sanitizeName('My_App.v2'), 'my-app-v2');
  assert.equal(sanitizeName('--x--'), 'x');
  assert.equal(sanitizeName('a'.repeat(70)).length, 63);
});

test('uses the origin remote name, from a nested folder too', () => {
  const root = mkdtempSync(join(tmpdir(), 'name-'));
  mkdirSync(join(root, '.git'));
  writeFileSync(
    join(root, '.git', 'config'),
    '[core]\n\tbare = false\n[remote "upstream"]\n\turl = x/other.git\n[remote "origin"]\n\turl = git@github.com:acme/Movies-App.git\n',
  );
  mkdirSync(join(root, 'sub', 'dir'), { recursive: true });
  assert.equal(repositoryName(join(root, 'sub', 'dir')), 'Movies-App');
  assert.equal(environmentName(undefined, join(root, 'sub', 'dir')), 'movies-app');
});

test('falls back to the folder name, and --name wins', () => {
  const root = mkdtempSync(join(tmpdir(), 'name-'));
  const folder = join(root, 'Shop Front');
  mkdirSync(folder);
  assert.equal(environmentName(undefined, folder), 'shop-front');
  assert.equal(environmentName('Demo', folder), 'demo');
  assert.throws(() => environmentName('___', folder), /--name/);
});

test('a partial .git gives the folder name, never an error; the nearest .git decides', () => {
  const root = mkdtempSync(join(tmpdir(), 'name-'));
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, '.git', 'config'), '[remote "origin"]\n\turl = https://example.com/acme/outer.git\n');
  const synced = join(root, 'Shop Front');
  // What a container's `.git` can leave once synced: hooks and objects, no config.
  mkdirSync(join(synced, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(synced, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  assert.equal(repositoryName(synced), undefined);
  assert.equal(environmentName(undefined, synced), 'shop-front');

  const configIsFolder = join(root, 'config-folder');
  mkdirSync(join(configIsFolder, '.git', 'config'), { recursive: true });
  assert.equal(environmentName(undefined, configIsFolder), 'config-folder');

  const removedWorktree = join(root, 'removed-worktree');
  mkdirSync(removedWorktree);
  writeFileSync(join(removedWorktree, '.git'), `gitdir: ${join(root, 'gone', '.git', 'worktrees', 'x')}\n`);
  assert.equal(environmentName(undefined, removedWorktree), 'removed-worktree');

  const emptyPointer = join(root, 'empty-pointer');
  mkdirSync(emptyPointer);
  writeFileSync(join(emptyPointer, '.git'), '');
  assert.equal(environmentName(undefined, emptyPointer), 'empty-pointer');
});

test('a worktree reads the config of its main repository', () => {
  const root = mkdtempSync(join(tmpdir(), 'name-'));
  mkdirSync(join(root, 'main', '.git', 'worktrees', 'feature'), { recursive: true });
  writeFileSync(join(root, 'main', '.git', 'config'), '[remote "origin"]\n\turl = git@github.com:acme/api.git\n');
  writeFileSync(join(root, 'main', '.git', 'worktrees', 'feature', 'commondir'), '../..\n');
  mkdirSync(join(root, 'feature'));
  writeFileSync(join(root, 'feature', '.git'), 'gitdir: ../main/.git/worktrees/feature\n');
  assert.equal(environmentName(undefined, join(root, 'feature')), 'api');
});

test('the current branch comes from HEAD, in a worktree too; detached or none is undefined', () => {
  const root = mkdtempSync(join(tmpdir(), 'name-'));
  mkdirSync(join(root, '.git', 'worktrees', 'wt'), { recursive: true });
  writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/feature/login\n');
  writeFileSync(join(root, '.git', 'config'), '[remote "origin"]\n\turl = https://example.com/acme/shop.git\n');
  mkdirSync(join(root, 'src'));
  assert.equal(currentBranch(join(root, 'src')), 'feature/login');

  const wt = join(root, 'wt');
  mkdirSync(wt);
  writeFileSync(join(wt, '.git'), `gitdir: ${join(root, '.git', 'worktrees', 'wt')}\n`);
  writeFileSync(join(root, '.git', 'worktrees', 'wt', 'HEAD'), 'ref: refs/heads/fix-1\n');
  writeFileSync(join(root, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
  assert.equal(currentBranch(wt), 'fix-1');
  assert.equal(repositoryName(wt), 'shop', 'the config is the common dir');

  writeFileSync(join(root, '.git', 'HEAD'), '3f2a9c0d1e2b3a4c5d6e7f8091a2b3c4d5e6f708\n');
  assert.equal(currentBranch(root), undefined);
  assert.equal(currentBranch(mkdtempSync(join(tmpdir(), 'no-git-'))), undefined);
});
