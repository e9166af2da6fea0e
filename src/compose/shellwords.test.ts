import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ShellwordsError, splitShellwords } from './shellwords.ts';

test('splits like a shell, without expanding anything', () => {
  assert.deepEqual(splitShellwords('npm run "start dev"'), ['npm', 'run', 'start dev']);
  assert.deepEqual(splitShellwords(`sh -c 'echo "a b" $HOME'`), ['sh', '-c', 'echo "a b" $HOME']);
  assert.deepEqual(splitShellwords('a\\ b "c\\"d" "e\\f" \'\' x""y'), ['a b', 'c"d', 'e\\f', '', 'xy']);
  assert.deepEqual(splitShellwords('  spaced \t out\n '), ['spaced', 'out']);
  assert.deepEqual(splitShellwords(''), []);
});

test('unterminated quotes are errors', () => {
  assert.throws(() => splitShellwords('echo "open'), ShellwordsError);
  assert.throws(() => splitShellwords("echo 'open"), ShellwordsError);
});
