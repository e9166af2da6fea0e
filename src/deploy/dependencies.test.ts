import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cacheFolder, cycle, fetchRepository, gitReason, repositoryUrl } from './dependencies.ts';
import { Progress } from './progress.ts';

const work = mkdtempSync(join(tmpdir(), 'devtool-deps-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('repositories: URLs and scp-like addresses as written, local paths as file:// URLs', () => {
  assert.equal(repositoryUrl('https://github.com/example/auth', '/p'), 'https://github.com/example/auth');
  assert.equal(repositoryUrl('ssh://git@host/x.git', '/p'), 'ssh://git@host/x.git');
  assert.equal(repositoryUrl('git@github.com:example/auth.git', '/p'), 'git@github.com:example/auth.git');
  assert.equal(repositoryUrl('../auth', '/work/app'), 'file:///work/auth');
  assert.equal(repositoryUrl('/srv/repos/auth', '/work/app'), 'file:///srv/repos/auth');
  assert.equal(repositoryUrl('~/src/auth', '/work/app', '/home/me'), 'file:///home/me/src/auth');
  assert.equal(repositoryUrl('a dir/x', '/w'), 'file:///w/a%20dir/x');
});

test('cache folders: per name and URL', () => {
  assert.match(cacheFolder('/h/dependencies', 'auth', 'https://x/auth'), /^\/h\/dependencies\/auth-[0-9a-f]{10}$/);
  assert.notEqual(cacheFolder('/h', 'auth', 'https://x/auth'), cacheFolder('/h', 'auth', 'https://y/auth'));
  assert.equal(cacheFolder('/h', 'auth', 'u'), cacheFolder('/h', 'auth', 'u'));
});

test("git's reason in one line", () => {
  const notRepo =
    "fatal: '/tmp/nope' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\n" +
    'Please make sure you have the correct access rights\nand the repository exists.\n';
  assert.equal(gitReason(notRepo, 128), "'/tmp/nope' does not appear to be a git repository");
  assert.equal(
    gitReason('warning: Could not find remote branch x to clone.\nfatal: Remote branch x not found in upstream origin\n', 128),
    'Remote branch x not found in upstream origin',
  );
  assert.equal(gitReason('', 1), 'git exited with code 1');
});

test('cycles name the path', () => {
  assert.equal(cycle(['app', 'auth'], 'db'), undefined);
  assert.equal(cycle(['app', 'auth'], 'app'), 'app -> auth -> app');
  assert.equal(cycle(['app', 'auth', 'db'], 'auth'), 'auth -> db -> auth');
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
  });

function repo(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'devtool.yml'), 'deploy: [echo one]\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'one');
  return dir;
}

test('a local repository: cloned shallow, then updated to its new commits, branches followed', async () => {
  const origin = repo('origin');
  let out = '';
  const ctx = { progress: new Progress({ write: (t: string) => (out += t) }, () => new Date(0)), cacheRoot: join(work, 'cache'), env: process.env };
  const dep = { repository: '../origin', variables: {}, wait: false, timeoutMs: 60_000 };
  const dir = await fetchRepository(ctx, 'backend', dep, join(work, 'app'));
  assert.equal(readFileSync(join(dir, 'devtool.yml'), 'utf8'), 'deploy: [echo one]\n');
  assert.equal(git(dir, 'rev-parse', '--is-shallow-repository').trim(), 'true');
  assert.match(out, /• dependency backend: cloning \.\.\/origin/);

  writeFileSync(join(origin, 'devtool.yml'), 'deploy: [echo two]\n');
  git(origin, 'commit', '-q', '-am', 'two');
  writeFileSync(join(dir, 'stray'), 'left by a deploy command');
  assert.equal(await fetchRepository(ctx, 'backend', dep, join(work, 'app')), dir, 'the same cache folder');
  assert.equal(readFileSync(join(dir, 'devtool.yml'), 'utf8'), 'deploy: [echo two]\n');
  assert.ok(!existsSync(join(dir, 'stray')), 'the cache is reset to the commit');
  assert.match(out, /• dependency backend: updating \.\.\/origin/);

  git(origin, 'checkout', '-q', '-b', 'feature');
  writeFileSync(join(origin, 'devtool.yml'), 'deploy: [echo feature]\n');
  git(origin, 'commit', '-q', '-am', 'feature');
  git(origin, 'checkout', '-q', 'main');
  await fetchRepository(ctx, 'backend', { ...dep, branch: 'feature' }, join(work, 'app'));
  assert.equal(readFileSync(join(dir, 'devtool.yml'), 'utf8'), 'deploy: [echo feature]\n');
});

test('a repository that cannot be cloned: the dependency and git reason, nothing left behind', async () => {
  const ctx = { progress: new Progress({ write: () => true }, () => new Date(0)), cacheRoot: join(work, 'cache2'), env: process.env };
  await assert.rejects(fetchRepository(ctx, 'auth', { repository: join(work, 'missing'), variables: {}, wait: false, timeoutMs: 60_000 }, work), (err: Error) =>
    /^dependency "auth": cannot clone \/.*\/missing: '\/.*\/missing' does not appear to be a git repository$/.test(err.message),
  );
  await assert.rejects(
    fetchRepository(ctx, 'auth', { repository: join(work, 'origin'), branch: 'nope', variables: {}, wait: false, timeoutMs: 60_000 }, work),
    /cannot clone .*\(branch nope\): Remote branch nope not found in upstream origin/,
  );
  assert.deepEqual(existsSync(ctx.cacheRoot) ? execFileSync('ls', ['-A', ctx.cacheRoot], { encoding: 'utf8' }) : '', '');
});
