import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commentSyntax, commentsOf } from './comments.ts';

const texts = (path: string, source: string) => commentsOf(path, source).map((c) => [c.line, c.text]);

test('TypeScript: line, block and trailing comments, never the inside of strings, templates or regular expressions', () => {
  const source = [
    '/** Header. */',
    "const url = 'https://example.test/a.md'; // trailing",
    'const t = `// in a template ${1 /* inside */}`;',
    'const re = /\\/\\/ not a comment/;',
    'function f() {',
    '  return 1;',
    '  // last in the block',
    '}',
  ].join('\n');
  assert.deepEqual(texts('x.ts', source), [
    [1, '/** Header. */'],
    [2, '// trailing'],
    [3, '/* inside */'],
    [7, '// last in the block'],
  ]);
});

test('JavaScript modules are read by the same parser', () => {
  assert.deepEqual(texts('bench/x.mjs', "// one\nconsole.log('// two');\n"), [[1, '// one']]);
});

test('Go: comments outside interpreted, raw and rune literals', () => {
  const source = ['// Package p.', 'package p', '', 'var s = "// no" + `/* no */` // yes', "var r = '\"' /* block", 'over lines */'].join('\n');
  assert.deepEqual(texts('a.go', source), [
    [1, '// Package p.'],
    [4, '// yes'],
    [5, '/* block\nover lines */'],
  ]);
});

test('hash comments: at a line start or after a blank, outside quotes', () => {
  const source = ['#!/usr/bin/env bash', '', 'echo "$#" ${#x} \'#\' "a # b" # real', 'x=a#b', '  # indented'].join('\n');
  assert.deepEqual(texts('s.sh', source), [
    [1, '#!/usr/bin/env bash'],
    [3, '# real'],
    [5, '# indented'],
  ]);
});

test('comments on consecutive lines are one; a blank line or code between keeps them apart', () => {
  const source = ['// one', '  // and one', '', '// two', 'f(); // three', '/* four */'].join('\n');
  assert.deepEqual(texts('x.ts', source), [
    [1, '// one\n  // and one'],
    [4, '// two'],
    [5, '// three\n/* four */'],
  ]);
});

test('which scanner reads a file: by its name, or a shell script by its first line', () => {
  assert.equal(commentSyntax('a/b.cjs', ''), 'typescript');
  assert.equal(commentSyntax('agent/go.mod', ''), 'go');
  assert.equal(commentSyntax('chart/values.yaml', ''), 'hash');
  assert.equal(commentSyntax('src/x/testdata/app/Dockerfile', ''), 'hash');
  assert.equal(commentSyntax('.ci/run', ''), 'hash');
  assert.equal(commentSyntax('tool', '#!/bin/sh\n'), 'hash');
  assert.equal(commentSyntax('data.json', '{}'), 'none');
  assert.deepEqual(commentsOf('data.json', '{"a": "# b"}'), []);
});
