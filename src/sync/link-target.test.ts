import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isWithin, realPath } from './link-target.ts';

/** A file system of links only: every other path is a directory or does not exist. */
const links = (map: Record<string, string>) => (path: string) => map[path];

test('a path without links resolves lexically, missing parts included', () => {
  assert.equal(realPath('/p/a/./b/../c', links({})), '/p/a/c');
  assert.equal(realPath('/p/../../..', links({})), '/');
});

test('a relative link resolves from its own folder, an absolute one from the root', () => {
  assert.equal(realPath('/p/src/lib', links({ '/p/src/lib': '../vendor/lib' })), '/p/vendor/lib');
  assert.equal(realPath('/p/ssh', links({ '/p/ssh': '/root/.ssh' })), '/root/.ssh');
});

test('a chain through a link to ".." leaves the folder although its spelling stays inside', () => {
  const fs = links({ '/home/dev/p/lnk/b': '..', '/home/dev/p/esc': 'lnk/b/lnk/b/lnk/b/lnk/b/../../../../../../etc' });
  assert.equal(realPath('/home/dev/p/esc', fs), '/etc');
  assert.equal(realPath('/home/dev/p/lnk/b', fs), '/home/dev/p');
});

test('links in links: each is replaced where it is met', () => {
  const fs = links({ '/p/a': 'b/c', '/p/b': 'd', '/p/d/c': '../../x' });
  assert.equal(realPath('/p/a', fs), '/x');
  assert.equal(realPath('/p/a/y', fs), '/x/y');
});

test('a loop resolves to nothing', () => {
  assert.equal(realPath('/p/a', links({ '/p/a': 'b', '/p/b': 'a' })), undefined);
  assert.equal(realPath('/p/self', links({ '/p/self': 'self/x' })), undefined);
});

test('within the folder: the folder itself and what is below it, not a sibling sharing its prefix', () => {
  assert.ok(isWithin('/p', '/p'));
  assert.ok(isWithin('/p', '/p/a'));
  assert.ok(!isWithin('/p', '/pa'));
  assert.ok(!isWithin('/p', '/'));
  assert.ok(isWithin('/', '/etc'));
});
