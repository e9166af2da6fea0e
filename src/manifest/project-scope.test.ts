import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectScope, showPath, syncRefusal } from './project-scope.ts';

/** A fresh tree: home/, and whatever `make` adds; paths resolved (tmpdir may be a link). */
function tree(make: (root: string) => void = () => undefined): { root: string; home: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'scope-')));
  mkdirSync(join(root, 'home'));
  make(root);
  return { root, home: join(root, 'home') };
}

const refused = (folder: string, home: string, local: string, allowOutside = false) => syncRefusal(projectScope(folder, home), local, allowOutside);

test('the project is the manifest folder, widened to its git repository (a .git folder, or the file of a worktree)', () => {
  const { root, home } = tree((r) => {
    mkdirSync(join(r, 'repo/.git'), { recursive: true });
    mkdirSync(join(r, 'repo/services/api'), { recursive: true });
    mkdirSync(join(r, 'wt/api'), { recursive: true });
    writeFileSync(join(r, 'wt/.git'), 'gitdir: /elsewhere\n');
    mkdirSync(join(r, 'plain/app'), { recursive: true });
  });
  assert.equal(projectScope(join(root, 'repo/services/api'), home).root, join(root, 'repo'));
  assert.equal(projectScope(join(root, 'wt/api'), home).root, join(root, 'wt'));
  assert.equal(projectScope(join(root, 'plain/app'), home).root, join(root, 'plain/app'));
  assert.equal(refused(join(root, 'repo/services/api'), home, '../../shared'), undefined, 'a folder of the repository');
  assert.equal(refused(join(root, 'plain/app'), home, './not-yet-created'), undefined, 'a folder that does not exist yet is judged by its path');
  assert.deepEqual(refused(join(root, 'plain/app'), home, '../other'), { kind: 'outside', reason: `is outside the project (${join(root, 'plain/app')})` });
});

test('a repository at the home directory (dotfiles) or above it does not widen the project', () => {
  const { home } = tree((r) => {
    mkdirSync(join(r, 'home/.git'));
    mkdirSync(join(r, 'home/code/app'), { recursive: true });
    mkdirSync(join(r, 'home/.ssh'));
  });
  const app = join(home, 'code/app');
  assert.equal(projectScope(app, home).root, app);
  assert.deepEqual(refused(app, home, join(home, '.ssh')), { kind: 'outside', reason: `is outside the project (${app})` });
  // A .git above the home directory: the same.
  const above = tree((r) => {
    mkdirSync(join(r, '.git'));
    mkdirSync(join(r, 'home/app'), { recursive: true });
  });
  assert.equal(projectScope(join(above.home, 'app'), above.home).root, join(above.home, 'app'));
});

test('the root, the home directory and folders holding it or the project are refused even with the opt-in', () => {
  const { root, home } = tree((r) => mkdirSync(join(r, 'work/app'), { recursive: true }));
  const app = join(root, 'work/app');
  for (const [local, reason] of [
    ['/', 'is the root of the file system, which is never synchronized'],
    [home, 'is the home directory, which is never synchronized (it holds SSH keys and cloud credentials)'],
    [root, 'holds the home directory, which is never synchronized'],
    ['..', `holds the whole project (${app}): synchronize the folders the container needs`],
  ] as const) {
    assert.deepEqual(refused(app, home, local, true), { kind: 'never', reason }, local);
  }
  assert.equal(refused(app, home, '../shared', true), undefined, 'another folder is allowed with the opt-in');
  assert.equal(refused(app, home, join(home, '.aws'), true), undefined, 'a folder of the home directory too, when asked for');
});

test('symlinks are resolved: a link inside the project to the home directory or elsewhere is not inside', () => {
  const { root, home } = tree((r) => {
    mkdirSync(join(r, 'app/src'), { recursive: true });
    mkdirSync(join(r, 'etc'));
    symlinkSync(join(r, 'home'), join(r, 'app/link-to-home'));
    symlinkSync(join(r, 'etc'), join(r, 'app/link-to-etc'));
    symlinkSync(join(r, 'app/src'), join(r, 'app/link-to-src'));
  });
  const app = join(root, 'app');
  assert.deepEqual(refused(app, home, './link-to-home', true), {
    kind: 'never',
    reason: 'is the home directory, which is never synchronized (it holds SSH keys and cloud credentials)',
    resolved: home,
  });
  assert.deepEqual(refused(app, home, './link-to-etc'), { kind: 'outside', reason: `is outside the project (${app})`, resolved: join(root, 'etc') });
  assert.deepEqual(
    refused(app, home, './link-to-etc/sub'),
    { kind: 'outside', reason: `is outside the project (${app})`, resolved: join(root, 'etc/sub') },
    'below a link, not existing',
  );
  assert.equal(refused(app, home, './link-to-src'), undefined, 'a link within the project stays inside');
  // The manifest folder reached through a link is the same project.
  symlinkSync(app, join(root, 'app-link'));
  assert.equal(refused(join(root, 'app-link'), home, './src'), undefined);
});

test('a manifest in the home directory has no project: every folder needs the opt-in, and the home itself is never synced', () => {
  const { home } = tree((r) => mkdirSync(join(r, 'home/code'), { recursive: true }));
  assert.equal(projectScope(home, home).root, undefined);
  assert.equal(refused(home, home, '.', true)?.kind, 'never');
  assert.equal(refused(home, home, './code')?.kind, 'outside');
  assert.equal(refused(home, home, './code', true), undefined);
});

test('paths for people: ./ inside the base, ~/ inside the home, else absolute', () => {
  assert.equal(showPath('/p/src', '/p', '/h'), './src');
  assert.equal(showPath('.', '/p', '/h'), '.');
  assert.equal(showPath('/h/.ssh', '/p', '/h'), '~/.ssh');
  assert.equal(showPath('/h', '/p', '/h'), '~');
  assert.equal(showPath('../x', '/p', '/h'), '/x');
});
