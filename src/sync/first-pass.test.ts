/**
 * The first pass's plan (golden: testdata/first-pass, a need list in Syncthing's own shapes and
 * what this machine has; UPDATE_GOLDEN=1 rewrites expected.json, review the diff), and keepLocal
 * on a real folder: every path gets a new version to scan while its content, mode and link
 * target end as they were.
 */
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertGolden } from '../../test/golden.ts';
import {
  conflictCopyName,
  deletedHereSummary,
  firstPassSummary,
  fsLookup,
  indexedCandidates,
  keepLocal,
  modifiedNs,
  planFirstPass,
  versionAtLeast,
  type LocalEntry,
} from './first-pass.ts';
import type { NeedItem } from './rest.ts';

const data = join(import.meta.dirname, 'testdata/first-pass');
const NOW = Date.parse('2026-11-24T08:50:00Z');

test('the plan of a need list (golden)', () => {
  const need = JSON.parse(readFileSync(join(data, 'need.json'), 'utf8')) as NeedItem[];
  const local = JSON.parse(readFileSync(join(data, 'local.json'), 'utf8')) as Record<
    string,
    (Omit<LocalEntry, 'mtimeNs'> & { mtimeNs: string }) | 'unreachable'
  >;
  const plan = planFirstPass(
    need,
    (rel) => {
      const e = local[rel];
      if (e === undefined) return 'absent';
      return e === 'unreachable' ? e : { ...e, mtimeNs: BigInt(e.mtimeNs) };
    },
    NOW,
  );
  const text = `${JSON.stringify(plan, null, 2)}\n`;
  assertGolden(join(data, 'expected.json'), text);
});

test('RFC 3339 times with nanoseconds and offsets', () => {
  assert.equal(modifiedNs('2026-11-24T08:48:19.123456789Z'), 1795510099123456789n);
  assert.equal(modifiedNs('2026-11-24T09:48:19.5+01:00'), 1795510099500000000n);
  assert.equal(modifiedNs('1970-01-01T00:00:00Z'), 0n);
  assert.equal(modifiedNs('yesterday'), undefined);
  assert.equal(modifiedNs(undefined), undefined);
});

test('keepLocal: new versions to scan, content, modes and link targets unchanged', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'first-pass-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'dir'));
  chmodSync(join(root, 'dir'), 0o750);
  writeFileSync(join(root, 'dir/file.txt'), 'precious\n');
  symlinkSync('dir/file.txt', join(root, 'rel-link'));
  symlinkSync('/etc/hostname', join(root, 'abs-link'));
  const mtimeMs = NOW + 5000;
  const keep = [
    { path: 'dir/file.txt', how: 'touch', mtimeMs, container: 'changed' },
    { path: 'dir', how: 'flip-mode', mtimeMs, container: 'deleted' },
    { path: 'rel-link', how: 'respell-link', mtimeMs, container: 'changed' },
    { path: 'abs-link', how: 'respell-link', mtimeMs, container: 'deleted' },
  ] as const;
  const seen: { paths: string[]; dirMode: number; rel: string; abs: string }[] = [];
  await keepLocal(root, keep, async (paths) => {
    seen.push({
      paths,
      dirMode: lstatSync(join(root, 'dir')).mode & 0o777,
      rel: readlinkSync(join(root, 'rel-link')),
      abs: readlinkSync(join(root, 'abs-link')),
    });
  });
  // First scan: everything, the directory's mode and the links' spelling changed (a version each).
  assert.deepEqual(seen[0], { paths: ['dir/file.txt', 'dir', 'rel-link', 'abs-link'], dirMode: 0o751, rel: './dir/file.txt', abs: '/./etc/hostname' });
  // Second: the directory and links as they were, which is again a version each.
  assert.deepEqual(seen[1], { paths: ['dir', 'rel-link', 'abs-link'], dirMode: 0o750, rel: 'dir/file.txt', abs: '/etc/hostname' });
  assert.equal(seen.length, 2);
  assert.equal(readFileSync(join(root, 'dir/file.txt'), 'utf8'), 'precious\n');
  for (const p of ['dir/file.txt', 'dir', 'rel-link', 'abs-link']) assert.equal(lstatSync(join(root, p)).mtimeMs, mtimeMs, p);
  assert.deepEqual(readdirSync(root).sort(), ['abs-link', 'dir', 'rel-link'], 'no temporary link left behind');
});

test('keepLocal puts modes and links back when the scan fails', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'first-pass-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'dir'), { mode: 0o755 });
  symlinkSync('dir', join(root, 'link'));
  const keep = [
    { path: 'dir', how: 'flip-mode', mtimeMs: NOW, container: 'deleted' },
    { path: 'link', how: 'respell-link', mtimeMs: NOW, container: 'changed' },
  ] as const;
  await assert.rejects(
    keepLocal(root, keep, async () => {
      throw new Error('sync service gone');
    }),
    /sync service gone/,
  );
  assert.equal(lstatSync(join(root, 'dir')).mode & 0o777, 0o755);
  assert.equal(readlinkSync(join(root, 'link')), 'dir');
});

test('fsLookup: entries, absent paths, and paths below a link or a file are unreachable', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'first-pass-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'a/b'), { recursive: true });
  writeFileSync(join(root, 'a/b/f.txt'), 'hello');
  symlinkSync(tmpdir(), join(root, 'out'));
  const look = fsLookup(root);
  assert.deepEqual({ ...(look('a/b/f.txt') as LocalEntry), mtimeNs: 0n }, { kind: 'file', size: 5, mtimeNs: 0n });
  assert.equal((look('a/b') as LocalEntry).kind, 'dir');
  assert.equal((look('out') as LocalEntry).kind, 'symlink');
  assert.equal(look('a/missing.txt'), 'absent');
  assert.equal(look('missing/deeper.txt'), 'absent');
  assert.equal(look('out/anything'), 'unreachable', 'below a link: never followed out of the folder');
  assert.equal(look('a/b/f.txt/x'), 'unreachable', 'below a file');
});

test('the summary line counts what the container changed and deleted', () => {
  const plan = {
    keep: [
      { path: 'a', how: 'touch', mtimeMs: 0, container: 'changed' },
      { path: 'b', how: 'touch', mtimeMs: 0, container: 'deleted' },
      { path: 'c', how: 'flip-mode', mtimeMs: 0, container: 'deleted' },
    ],
    arriving: [],
  } as const;
  assert.equal(
    firstPassSummary('/home/ann/shop', { keep: [...plan.keep], arriving: [], deletedHere: [] }),
    "first sync of /home/ann/shop: while no 'devtool up' ran, the dev container changed 1 path(s) and deleted 2 path(s) that this machine has: " +
      "kept this machine's version; the container's versions come back as *.sync-conflict-* copies next to them (paths in devtool.log)",
  );
  assert.equal(firstPassSummary('/x', { keep: [], arriving: ['n'], deletedHere: [] }), undefined);
});

test("absent here, present there: deleted here since the container had it, or the container's own", () => {
  const file = (name: string, version: string[], deleted = false): NeedItem => ({
    name,
    type: 'FILE_INFO_TYPE_FILE',
    deleted,
    size: 3,
    modified: '2026-11-24T08:40:00Z',
    modifiedBy: 'CCCCCCC',
    version,
  });
  const need = [
    // Synced from here, changed there, then deleted here: the deletion is not in the container's version.
    file('src/changed-there.txt', ['LLLLLLL:1', 'CCCCCCC:2']),
    // Deleted here, the deletion pulled by the container, which then made the file again.
    file('made-again.txt', ['LLLLLLL:3', 'CCCCCCC:4']),
    // Only the container ever had it.
    file('new-there.txt', ['CCCCCCC:5']),
    // Deleted there too: nothing to do.
    file('gone.txt', ['LLLLLLL:1', 'CCCCCCC:6'], true),
    // A folder the container filled: Syncthing's own rules.
    { ...file('dir', ['LLLLLLL:1', 'CCCCCCC:7']), type: 'FILE_INFO_TYPE_DIRECTORY' },
  ];
  const index = new Map([
    ['src/changed-there.txt', { deleted: true, version: ['LLLLLLL:3'] }],
    ['made-again.txt', { deleted: true, version: ['LLLLLLL:3'] }],
    // A path this machine's index never had reads as an empty entry.
    ['new-there.txt', { deleted: false, version: [] }],
  ]);
  const absent = () => 'absent' as const;
  // new-there.txt: only the container ever changed it, no question asked.
  assert.deepEqual(indexedCandidates(need, absent), ['src/changed-there.txt', 'made-again.txt']);
  const plan = planFirstPass(need, absent, NOW, index);
  assert.deepEqual(plan.deletedHere, [{ path: 'src/changed-there.txt', conflictCopy: 'src/changed-there.sync-conflict-20261124-085000-CCCCCCC.txt' }]);
  assert.deepEqual(plan.arriving, ['made-again.txt', 'new-there.txt', 'dir']);
  assert.deepEqual(plan.keep, []);
  // Without this machine's index (a first `up`), everything the container has arrives.
  assert.deepEqual(planFirstPass(need, absent, NOW).deletedHere, []);
});

test('version vectors: one has seen every change of the other', () => {
  assert.ok(versionAtLeast(['A:2', 'B:1'], ['A:2']));
  assert.ok(versionAtLeast(['A:2', 'B:1'], ['B:1', 'A:1']));
  assert.ok(!versionAtLeast(['A:1', 'B:5'], ['A:2']), 'concurrent');
  assert.ok(!versionAtLeast(['B:5'], ['A:1']));
  assert.ok(versionAtLeast([], []));
  assert.ok(versionAtLeast(['A:18446744073709551615'], ['A:18446744073709551614']), 'counters are 64-bit');
});

test("conflict-copy names in Syncthing's form", () => {
  assert.equal(conflictCopyName('a/b/notes.md', NOW, 'ABCDEFG'), 'a/b/notes.sync-conflict-20261124-085000-ABCDEFG.md');
  assert.equal(conflictCopyName('Makefile', NOW, 'ABCDEFG'), 'Makefile.sync-conflict-20261124-085000-ABCDEFG');
  assert.equal(conflictCopyName('x/.env', NOW, 'ABCDEFG'), 'x/.env.sync-conflict-20261124-085000-ABCDEFG');
  assert.equal(conflictCopyName('a.tar.gz', NOW, 'ABCDEFG'), 'a.tar.sync-conflict-20261124-085000-ABCDEFG.gz');
  assert.equal(deletedHereSummary('/x', 0), undefined);
  assert.match(deletedHereSummary('/x', 2)!, /changed 2 path\(s\) deleted here .*: deleted there too/);
});
