import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalWatcher } from './watcher.ts';

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
