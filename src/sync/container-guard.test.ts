import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ContainerGuard, containerIgnoreLines, linkLeavesFolder, RefusedLinks } from './container-guard.ts';
import { lineRegexes } from './ignore-match.ts';

test('links that leave the folder: absolute targets, and relative ones climbing above its root', () => {
  assert.equal(linkLeavesFolder('ssh', '/root/.ssh'), true);
  assert.equal(linkLeavesFolder('src/etc', '../../etc'), true);
  assert.equal(linkLeavesFolder('up', '..'), true);
  assert.equal(linkLeavesFolder('a/b/c', '../../../x'), true);
  assert.equal(linkLeavesFolder('win', 'C:\\Users'), true);
  assert.equal(linkLeavesFolder('src/inside', 'nested/keep.txt'), false);
  assert.equal(linkLeavesFolder('a/b/c', '../../x'), false, 'climbs to the root, not above it');
  assert.equal(linkLeavesFolder('a/sneaky', 'x/../../..'), true);
  assert.equal(linkLeavesFolder('self', '.'), false);
});

test("the container's ignore lines: the user's first, then .git and the refused links, matched literally", () => {
  assert.deepEqual(containerIgnoreLines(['node_modules', '!.git'], true, ['ssh']), ['node_modules', '!.git'], 'a trusted container gets only the user lines');
  const lines = containerIgnoreLines(['node_modules'], false, ['ssh', 'weird*[name]']);
  assert.deepEqual(lines, ['node_modules', '(?d).git', '(?d)/ssh', '(?d)/weird\\*\\[name\\]']);
  // Read the way Syncthing reads them (ignore-match.ts follows lib/ignore):
  const matches = (line: string, path: string) => lineRegexes(line).some((r) => r.test(path));
  assert.ok(matches('(?d).git', '.git/hooks/pre-commit'));
  assert.ok(matches('(?d).git', 'vendor/lib/.git'), 'nested repositories too');
  assert.ok(matches(lines[3]!, 'weird*[name]'));
  assert.ok(!matches(lines[3]!, 'weirdXname'), 'a refused path matches only itself');
  assert.ok(!matches(lines[2]!, 'src/ssh'), 'rooted');
});

test('refused links are kept per folder across sessions', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'guard-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'refused-links.json');
  const a = new RefusedLinks(file);
  assert.deepEqual(a.of('f1'), []);
  assert.equal(a.add('f1', 'ssh'), true);
  assert.equal(a.add('f1', 'ssh'), false);
  a.add('f2', 'etc');
  const b = new RefusedLinks(file);
  assert.deepEqual([b.of('f1'), b.of('f2')], [['ssh'], ['etc']]);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { f1: ['ssh'], f2: ['etc'] });
});

/** A folder, its environment's state folder and a guard over both, with the session faked. */
function guarded(t: { after(fn: () => void): void }, noPermissions = false) {
  const root = mkdtempSync(join(tmpdir(), 'guard-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const f = { id: 'f1', local: join(root, 'project'), remote: '/app', mode: 'two-way' as const };
  mkdirSync(f.local);
  const pushed: string[][] = [];
  const notices: string[] = [];
  const guard = new ContainerGuard({
    stateDir: join(root, 'state'),
    localEntry: async () => ({ local: { noPermissions } }),
    pushIgnores: async (folder) => void pushed.push(guard.ignoreLines(folder, [])),
    notice: (m) => notices.push(m),
  });
  return { f, guard, pushed, notices, trash: join(root, 'state', 'trash', 'f1') };
}

test('a link out of the folder from the container: ignored there first, then removed here; one inside stays', async (t) => {
  const { f, guard, pushed, notices } = guarded(t);
  symlinkSync('/root/.ssh', join(f.local, 'ssh'));
  symlinkSync('ssh', join(f.local, 'inside'));
  await guard.pulled(f, 'ssh', 'symlink');
  await guard.pulled(f, 'inside', 'symlink');
  assert.deepEqual(pushed, [['(?d).git', '(?d)/ssh']], 'the ignore went to the container before the link went away');
  assert.equal(existsSync(join(f.local, 'ssh')) || readdirSync(f.local).includes('ssh'), false);
  assert.equal(readlinkSync(join(f.local, 'inside')), 'ssh');
  assert.match(notices[0]!, /made the link ssh -> \/root\/\.ssh .* points out of the folder: not created here/);
  assert.deepEqual(guard.ignoreLines(f, ['node_modules']), ['node_modules', '(?d).git', '(?d)/ssh'], 'and stays ignored');
  // A trusted container's links stay.
  symlinkSync('/etc', join(f.local, 'etc'));
  await guard.pulled({ ...f, trustContainer: true }, 'etc', 'symlink');
  assert.equal(readlinkSync(join(f.local, 'etc')), '/etc');
});

test('a script edited in the container gets back the execute bits of the version it replaced', async (t) => {
  const { f, guard, trash } = guarded(t);
  mkdirSync(join(trash, 'bin'), { recursive: true });
  writeFileSync(join(trash, 'bin/run.sh'), 'old\n', { mode: 0o755 });
  mkdirSync(join(f.local, 'bin'));
  writeFileSync(join(f.local, 'bin/run.sh'), 'new\n', { mode: 0o644 });
  writeFileSync(join(f.local, 'made-there.sh'), 'x\n', { mode: 0o644 });
  await guard.pulled(f, 'bin/run.sh', 'file');
  await guard.pulled(f, 'made-there.sh', 'file');
  assert.equal(lstatSync(join(f.local, 'bin/run.sh')).mode & 0o777, 0o755);
  assert.equal(lstatSync(join(f.local, 'made-there.sh')).mode & 0o777, 0o644, 'nothing replaced: no bits to give back');
  assert.deepEqual(guard.trash(f), { type: 'trashcan', fsPath: trash, fsType: 'basic', params: { cleanoutDays: '14' }, cleanupIntervalS: 3600 });
});

test('a chmod +x here of a file whose entry has no bits moves its modification time on, so it is sent', async (t) => {
  const bare = guarded(t, true);
  writeFileSync(join(bare.f.local, 'after.txt'), 'x\n', { mode: 0o755 });
  writeFileSync(join(bare.f.local, 'plain.txt'), 'x\n', { mode: 0o644 });
  const before = lstatSync(join(bare.f.local, 'after.txt')).mtimeMs;
  await bare.guard.beforeScan(bare.f, 'after.txt');
  await bare.guard.beforeScan(bare.f, 'plain.txt');
  const after = lstatSync(join(bare.f.local, 'after.txt')).mtimeMs;
  assert.ok(after > before && after <= before + 2, `moved on by one to two milliseconds: ${before} -> ${after}`);
  // An entry that has its bits needs nothing.
  const withBits = guarded(t, false);
  writeFileSync(join(withBits.f.local, 'run.sh'), 'x\n', { mode: 0o755 });
  const was = lstatSync(join(withBits.f.local, 'run.sh')).mtimeMs;
  await withBits.guard.beforeScan(withBits.f, 'run.sh');
  assert.equal(lstatSync(join(withBits.f.local, 'run.sh')).mtimeMs, was);
});
