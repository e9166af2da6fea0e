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

test('a second write within chokidar 50 ms throttle is still scanned: each batch is scanned again once the window has passed', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'watcher-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'a.txt'), 'x');
  const scans: { at: number; subs: string[] }[] = [];
  const watcher = new LocalWatcher([{ id: 'f', local: root, remote: '/app', mode: 'two-way' }], {
    scan: async (_id, subs) => void scans.push({ at: Date.now(), subs }),
    ignoresChanged: () => undefined,
    warn: () => undefined,
  });
  t.after(() => watcher.close());
  await watcher.start();
  writeFileSync(join(root, 'a.txt'), 'one');
  // Once the first scan is asked for, the next write comes inside chokidar's window: no event of its own.
  for (let i = 0; i < 2000 && scans.length === 0; i++) await sleep(1);
  writeFileSync(join(root, 'a.txt'), 'two');
  const second = Date.now();
  await sleep(300);
  assert.deepEqual(scans[0]?.subs, ['a.txt']);
  // scans[0] was asked for before the second write (waited for above); one after it must follow.
  assert.ok(
    scans.slice(1).some((s) => s.subs.includes('a.txt')),
    `a scan of a.txt after the second write: ${JSON.stringify(scans.map((s) => ({ ...s, at: s.at - second })))}`,
  );
});
