import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { countWatchedFolders, parseLimit, watchLimitWarnings } from './watch-limits.ts';

test('folders are counted as the watchers see them: ignored names, Syncthing folders and links left out', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'watch-limits-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const d of ['src/a/b', 'src/c', 'node_modules/x/y', 'build/out', 'lib/build', '.stversions/old']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'src', 'file.ts'), '');
  symlinkSync(join(root, 'src'), join(root, 'link'));
  writeFileSync(join(root, '.stignore'), 'node_modules\n/build\n*.log\n');
  // root, src, src/a, src/a/b, src/c, lib, lib/build (only the top-level build is anchored)
  assert.equal(countWatchedFolders(root), 7);
  assert.equal(countWatchedFolders(root, 3), 3, 'stops at the cap');
});

test('the kernel setting is read as written, anything else is no limit', () => {
  assert.equal(parseLimit('8192\n'), 8192);
  assert.equal(parseLimit(undefined), undefined);
  assert.equal(parseLimit(''), undefined);
  assert.equal(parseLimit('cat: no such file'), undefined);
});

test('a warning per end whose limit is below two watches per folder, naming the setting and the fix', () => {
  assert.deepEqual(watchLimitWarnings(4000, { local: 8192, remote: 8192 }), []);
  const both = watchLimitWarnings(5000, { local: 8192, remote: 9000 });
  assert.equal(both.length, 2);
  assert.match(
    both[0]!,
    new RegExp(
      String.raw`^this machine's inotify limit \(fs\.inotify\.max_user_watches = 8192\) is too low for the 5000 folders synchronized ` +
        String.raw`\(about 10000 watches\).*sysctl -w fs\.inotify\.max_user_watches=524288$`,
    ),
  );
  assert.match(both[1]!, /^the dev container's inotify limit \(fs\.inotify\.max_user_watches = 9000, set on its node\)/);
  assert.deepEqual(watchLimitWarnings(5000, { remote: 524288 }), [], 'an unknown local limit (not Linux) is not a warning');
});
