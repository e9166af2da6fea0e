import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { listTree } from './bootstrap.ts';
import { READ_WHOLE_MAX, writeTar } from './tar-writer.ts';
import { readTar, writeTarToBuffer } from './testdata/tar.ts';

function tempTree(t: TestContext): string {
  const root = mkdtempSync(join(tmpdir(), 'tar-writer-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  return root;
}
const keepAll = () => false;

test('names past ustar limits (split, PAX path and linkpath, non-ASCII) read back the same, in tar-stream and GNU tar', async (t) => {
  const root = tempTree(t);
  const deep = `${'d'.repeat(60)}/${'e'.repeat(90)}`; // 151 bytes: ustar's prefix + name
  const long = 'n'.repeat(180); // one component past 100: PAX only
  const accents = 'é'.repeat(60); // 120 bytes in UTF-8
  mkdirSync(join(root, deep), { recursive: true });
  writeFileSync(join(root, deep, 'f.txt'), 'deep');
  writeFileSync(join(root, long), 'long');
  writeFileSync(join(root, accents), 'accents');
  symlinkSync(`${'../'.repeat(10)}${'t'.repeat(120)}`, join(root, 'far-link'));
  const { tar, stats } = await writeTarToBuffer(root, listTree(root, keepAll));
  const seen = await readTar(tar);
  assert.equal(seen.get(`${deep}/f.txt`)?.body.toString(), 'deep');
  assert.equal(seen.get(long)?.body.toString(), 'long');
  assert.equal(seen.get(accents)?.body.toString(), 'accents');
  assert.equal(seen.get('far-link')?.linkname, `${'../'.repeat(10)}${'t'.repeat(120)}`);
  assert.deepEqual(stats, { files: 3, dirs: 2, symlinks: 1, bytes: 4 + 4 + 7, skipped: 0 });

  const gnu = spawnSync('tar', ['-tf', '-'], { input: tar, encoding: 'utf8' });
  assert.equal(gnu.status, 0, gnu.stderr);
  assert.deepEqual(gnu.stdout.trim().split('\n').sort(), [`${deep.split('/')[0]}/`, `${deep}/`, `${deep}/f.txt`, accents, 'far-link', long].sort());
});

test('contents cross slab boundaries intact, every slab keeps its first byte free, and the archive ends with two zero blocks', async (t) => {
  const root = tempTree(t);
  const sizes = [0, 1, 511, 512, 513, 3000, 70_000, READ_WHOLE_MAX + 12_345];
  sizes.forEach((n, i) => {
    writeFileSync(join(root, `f${i}`), Buffer.alloc(n, 65 + i));
  });
  // Slabs of 1 kB: most headers, files and paddings straddle one; the small files bigger than a
  // slab get a slab of their own.
  const { tar, slabs } = await writeTarToBuffer(root, listTree(root, keepAll), 1024);
  assert.ok(slabs > 100, `${slabs} slabs`);
  assert.equal(tar.length % 512, 0);
  assert.ok(tar.subarray(-1024).every((b) => b === 0));
  const seen = await readTar(tar);
  sizes.forEach((n, i) => {
    assert.ok(seen.get(`f${i}`)!.body.equals(Buffer.alloc(n, 65 + i)), `f${i} (${n} bytes)`);
  });
});

test('a file changed since it was listed: a small one goes as it is now; a big one cut short fails the archive', async (t) => {
  const root = tempTree(t);
  writeFileSync(join(root, 'small'), Buffer.alloc(10_000, 1));
  writeFileSync(join(root, 'gone'), 'x');
  const items = listTree(root, keepAll);
  truncateSync(join(root, 'small'), 100);
  rmSync(join(root, 'gone'));
  const { tar, stats } = await writeTarToBuffer(root, items);
  assert.equal((await readTar(tar)).get('small')?.body.length, 100);
  assert.deepEqual(stats, { files: 1, dirs: 0, symlinks: 0, bytes: 100, skipped: 1 });

  writeFileSync(join(root, 'big'), Buffer.alloc(READ_WHOLE_MAX + 1, 2));
  const bigItems = listTree(root, keepAll).filter((it) => it.rel === 'big');
  truncateSync(join(root, 'big'), 10);
  await assert.rejects(writeTar(root, bigItems, { slabBytes: 64 * 1024, headroom: 1, emit: async () => undefined }), /big changed size while it was read/);
});

test('the next slab is only written once emit has resolved (the socket paces the archive)', async (t) => {
  const root = tempTree(t);
  for (let i = 0; i < 50; i++) writeFileSync(join(root, `f${i}`), Buffer.alloc(10_000, i));
  let pending = false;
  let overlapped = false;
  await writeTar(root, listTree(root, keepAll), {
    slabBytes: 16 * 1024,
    headroom: 1,
    emit: async () => {
      overlapped ||= pending;
      pending = true;
      await new Promise((r) => setTimeout(r, 2));
      pending = false;
    },
  });
  assert.equal(overlapped, false);
});
