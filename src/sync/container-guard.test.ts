import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { containerIgnoreLines, linkLeavesFolder, RefusedLinks } from './container-guard.ts';
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
