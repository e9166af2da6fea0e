import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { listTree } from './bootstrap.ts';
import { readTar, writeTarToBuffer } from './testdata/tar.ts';
import { leaveOutMatcher } from './ignore-match.ts';

test('the bootstrap archive holds the tree with modes, times and links, and nothing .stignore leaves out', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'bootstrap-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const d of ['src/lib', 'node_modules/x', 'secrets']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'src', 'lib', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(join(root, 'big.bin'), Buffer.alloc(5 * 1024 * 1024, 7)); // streamed, not read whole
  writeFileSync(join(root, 'node_modules', 'x', 'index.js'), '');
  writeFileSync(join(root, 'secrets', 'key.pem'), 'KEY');
  writeFileSync(join(root, '.env'), 'TOKEN=1');
  writeFileSync(join(root, '.env.example'), 'TOKEN=');
  writeFileSync(join(root, '.stignore'), 'node_modules\n/secrets\n.env*\n!.env.example\n');
  mkdirSync(join(root, '.stfolder'));
  symlinkSync('src/lib', join(root, 'lib-link'));
  utimesSync(join(root, 'run.sh'), new Date('2024-01-02T03:04:05Z'), new Date('2024-01-02T03:04:05Z'));

  const items = listTree(root, leaveOutMatcher(root)!);
  const { tar, stats } = await writeTarToBuffer(root, items);
  const seen = await readTar(tar);

  // `.env.example` is negated in .stignore: left to Syncthing, never guessed.
  assert.deepEqual([...seen.keys()].sort(), ['big.bin', 'lib-link', 'run.sh', 'src/', 'src/lib/', 'src/lib/a.ts'] /* directories end in / */);
  assert.equal(seen.get('src/lib/')!.type, 'directory');
  assert.equal(seen.get('run.sh')!.mode, 0o755);
  assert.equal(seen.get('run.sh')!.mtime, Date.parse('2024-01-02T03:04:05Z'));
  assert.equal(seen.get('big.bin')!.body.length, 5 * 1024 * 1024);
  assert.deepEqual({ type: seen.get('lib-link')!.type, linkname: seen.get('lib-link')!.linkname }, { type: 'symlink', linkname: 'src/lib' });
  assert.deepEqual(stats, { files: 3, dirs: 2, symlinks: 1, bytes: 5 * 1024 * 1024 + 20 + 10, skipped: 0 });
});
