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
import { firstPassSummary, fsLookup, keepLocal, modifiedNs, planFirstPass, type LocalEntry } from './first-pass.ts';
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
    firstPassSummary('/home/ann/shop', { keep: [...plan.keep], arriving: [] }),
    "first sync of /home/ann/shop: while no 'devtool up' ran, the dev container changed 1 path(s) and deleted 2 path(s) that this machine has: " +
      "kept this machine's version; the container's versions come back as *.sync-conflict-* copies next to them (paths in devtool.log)",
  );
  assert.equal(firstPassSummary('/x', { keep: [], arriving: ['n'] }), undefined);
});
