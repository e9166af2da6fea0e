import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ContainerGuard, containerIgnoreLines, FolderLinks } from './container-guard.ts';
import { lineRegexes } from './ignore-match.ts';

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

test('links are kept per folder across sessions', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'guard-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'refused-links.json');
  const a = new FolderLinks(file);
  assert.deepEqual(a.of('f1'), []);
  assert.equal(a.add('f1', 'ssh'), true);
  assert.equal(a.add('f1', 'ssh'), false);
  a.add('f2', 'etc');
  const b = new FolderLinks(file);
  assert.deepEqual([b.of('f1'), b.of('f2')], [['ssh'], ['etc']]);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { f1: ['ssh'], f2: ['etc'] });
  b.delete('f2', 'etc');
  assert.deepEqual(new FolderLinks(file).of('f2'), []);
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

/** The container placing `path -> target` here: the link, then its pull reported to the guard. */
function place(g: ReturnType<typeof guarded>, path: string, target: string): void {
  symlinkSync(target, join(g.f.local, path));
  g.guard.pulled(g.f, path, 'symlink');
}

const isThere = (dir: string, name: string) => readdirSync(dir).includes(name);

test('a link out of the folder from the container: ignored there first, then removed here; one inside stays', async (t) => {
  const g = guarded(t);
  const { f, guard, pushed, notices } = g;
  place(g, 'ssh', '/root/.ssh');
  place(g, 'inside', 'src/not-yet.txt');
  await guard.checkLinks();
  assert.deepEqual(pushed, [['(?d).git', '(?d)/ssh']], 'the ignore went to the container before the link went away');
  assert.equal(isThere(f.local, 'ssh'), false);
  assert.equal(readlinkSync(join(f.local, 'inside')), 'src/not-yet.txt', 'a link to a name inside the folder, even one that is not there');
  assert.match(notices[0]!, /made the link ssh -> \/root\/\.ssh .* leads out of the folder: not created here/);
  assert.deepEqual(guard.ignoreLines(f, ['node_modules']), ['node_modules', '(?d).git', '(?d)/ssh'], 'and stays ignored');
  // A trusted container's links stay.
  symlinkSync('/etc', join(f.local, 'etc'));
  guard.pulled({ ...f, trustContainer: true }, 'etc', 'symlink');
  await guard.checkLinks();
  assert.equal(readlinkSync(join(f.local, 'etc')), '/etc');
});

test('links whose spelling stays inside but whose real target leaves the folder are refused, in either order', async (t) => {
  const chain = 'lnk/b/lnk/b/lnk/b/lnk/b/../../../../../../etc';
  // The link to ".." first: the second link is resolved through it.
  const first = guarded(t);
  mkdirSync(join(first.f.local, 'lnk'));
  place(first, 'lnk/b', '..');
  await first.guard.checkLinks();
  assert.equal(readlinkSync(join(first.f.local, 'lnk/b')), '..', 'a link to the folder itself stays');
  place(first, 'esc', chain);
  await first.guard.checkLinks();
  assert.equal(isThere(first.f.local, 'esc'), false);
  assert.deepEqual(first.pushed.at(-1), ['(?d).git', '(?d)/esc']);
  // The escaping link first, harmless while lnk/b does not exist; the link to ".." makes it leave.
  const second = guarded(t);
  place(second, 'esc', chain);
  await second.guard.checkLinks();
  assert.equal(readlinkSync(join(second.f.local, 'esc')), chain);
  mkdirSync(join(second.f.local, 'lnk'));
  place(second, 'lnk/b', '..');
  await second.guard.checkLinks();
  assert.equal(isThere(second.f.local, 'esc'), false, 'checked again when lnk/b arrived');
  assert.equal(readlinkSync(join(second.f.local, 'lnk/b')), '..');
});

test("a link through this machine's own link out of the folder leads out too; a loop is refused", async (t) => {
  const g = guarded(t);
  symlinkSync('/usr', join(g.f.local, 'mine'));
  place(g, 'via-mine', 'mine/share');
  place(g, 'loop', 'loop/x');
  await g.guard.checkLinks();
  assert.equal(isThere(g.f.local, 'via-mine'), false);
  assert.equal(isThere(g.f.local, 'loop'), false);
  assert.equal(readlinkSync(join(g.f.local, 'mine')), '/usr', "this machine's own links are not the guard's");
});

test('a script edited in the container gets back the execute bits of the version it replaced', async (t) => {
  const { f, guard, trash } = guarded(t);
  mkdirSync(join(trash, 'bin'), { recursive: true });
  writeFileSync(join(trash, 'bin/run.sh'), 'old\n', { mode: 0o755 });
  mkdirSync(join(f.local, 'bin'));
  writeFileSync(join(f.local, 'bin/run.sh'), 'new\n', { mode: 0o644 });
  writeFileSync(join(f.local, 'made-there.sh'), 'x\n', { mode: 0o644 });
  guard.pulled(f, 'bin/run.sh', 'file');
  guard.pulled(f, 'made-there.sh', 'file');
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
