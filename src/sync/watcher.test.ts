import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalWatcher, plainIgnoreNames } from './watcher.ts';

/** fs.watch handles open in this process: each keeps the event loop (and so `up`) alive. */
const watchHandles = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;

test('closing the watcher during its initial walk of a big tree leaves no watch open', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'watcher-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (let d = 0; d < 300; d++) {
    mkdirSync(join(root, `d${d}`, 'sub'), { recursive: true });
    writeFileSync(join(root, `d${d}`, 'sub', 'f.txt'), 'x');
  }
  const before = watchHandles();
  const watcher = new LocalWatcher([{ id: 'f', local: root, remote: '/app', mode: 'two-way' }], {
    scan: async () => undefined,
    ignoresChanged: () => undefined,
    warn: () => undefined,
  });
  const started = watcher.start();
  started.catch(() => undefined);
  // Close once the walk has begun (its first directory watched), long before it is ready.
  for (let i = 0; i < 2000 && watchHandles() === before; i++) await sleep(1);
  assert.ok(watchHandles() > before, 'the walk began');
  await watcher.close();
  // Give an unclosed walk the time to go on watching the rest of the tree.
  await sleep(500);
  assert.equal(watchHandles(), before);
});

/** A watcher on `root` whose scan requests are collected. */
function collecting(root: string) {
  const scanned: string[] = [];
  let ignoresChanged = 0;
  const watcher = new LocalWatcher([{ id: 'f', local: root, remote: '/app', mode: 'two-way' }], {
    scan: async (_id, subs) => void scanned.push(...subs),
    ignoresChanged: () => void ignoresChanged++,
    warn: () => undefined,
  });
  return { watcher, scanned, ignoresChanged: () => ignoresChanged };
}
async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !ok(); i++) await sleep(10);
  assert.ok(ok(), what);
}

test('one watch per folder, none per file, none in what .stignore names plainly ((?d) or not)', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'watcher-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, '.stignore'), '// deps\n(?d)node_modules\n(?d)/bin\n');
  for (let d = 0; d < 5; d++) {
    mkdirSync(join(root, 'src', `d${d}`), { recursive: true });
    for (let f = 0; f < 20; f++) writeFileSync(join(root, 'src', `d${d}`, `f${f}.js`), 'x');
    mkdirSync(join(root, 'node_modules', `p${d}`, 'lib'), { recursive: true });
    mkdirSync(join(root, 'src', `d${d}`, 'node_modules', 'x'), { recursive: true });
  }
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'src', 'bin'));
  const before = watchHandles();
  const { watcher } = collecting(root);
  await watcher.start();
  t.after(() => watcher.close());
  // root, src, src/d0..d4, src/bin (only the top bin is named "/bin")
  assert.equal(watcher.watchedDirs, 8);
  assert.equal(watchHandles() - before, 8);
});

test('changes anywhere below, in new folders too, become scans of their paths; deleted folders are unwatched', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'watcher-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, '.stignore'), 'node_modules\n');
  const { watcher, scanned, ignoresChanged } = collecting(root);
  await watcher.start();
  t.after(() => watcher.close());
  writeFileSync(join(root, 'a', 'b', 'x.txt'), 'one');
  await until('a nested edit', () => scanned.includes('a/b/x.txt'));
  mkdirSync(join(root, 'new', 'deep'), { recursive: true });
  await until('the new folder', () => scanned.includes('new'));
  await until('its subfolder watched', () => watcher.watchedDirs === 5);
  writeFileSync(join(root, 'new', 'deep', 'y.txt'), 'two');
  await until('an edit in the new folder', () => scanned.includes('new/deep/y.txt'));
  mkdirSync(join(root, 'node_modules', 'p'), { recursive: true });
  writeFileSync(join(root, 'node_modules', 'p', 'i.js'), 'x');
  writeFileSync(join(root, '.stignore'), 'node_modules\ndist\n');
  await until('the .stignore change', () => ignoresChanged() === 1);
  assert.ok(!scanned.some((s) => s.startsWith('node_modules')), 'ignored: never scanned');
  assert.equal(watcher.watchedDirs, 5, 'node_modules is not watched');
  rmSync(join(root, 'new'), { recursive: true });
  await until('the deleted folders unwatched', () => watcher.watchedDirs === 3);
});

test('plain names of a .stignore: prefixes aside, up to the first negation or #include', () => {
  assert.deepEqual(
    [...plainIgnoreNames('// c\n(?d)node_modules\n(?i)(?d)Target\n/build/\n*.pyc\nsrc/gen\n/vendor/bundle\n#comment\n!keep\nafter\n')],
    ['node_modules', 'Target', '/build'],
  );
  assert.deepEqual([...plainIgnoreNames('a\n#include more\nb\n')], ['a']);
});
