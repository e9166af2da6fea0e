import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitCode, UsageError } from '../base/errors.ts';
import { assignmentWords, parseAssignments } from './assignments.ts';

test('KEY=VALUE words to a map: values with "=" and empty values; a later flag wins, in the first place', () => {
  const table: [string[], Record<string, string>][] = [
    [[], {}],
    [['A=1'], { A: '1' }],
    [['A=1', 'B=x=y', 'C=', 'A=2'], { A: '2', B: 'x=y', C: '' }],
    [['_b2=x=y', 'EMPTY='], { _b2: 'x=y', EMPTY: '' }],
    [['URL=https://h/?a=1&b=2', 'SPACE= a b '], { URL: 'https://h/?a=1&b=2', SPACE: ' a b ' }],
  ];
  for (const [words, expected] of table) {
    const parsed = parseAssignments(words, '--var');
    assert.deepEqual(parsed, expected, words.join(' '));
    assert.deepEqual(Object.keys(parsed), Object.keys(expected), `order of ${words.join(' ')}`);
  }
});

test('"__proto__" is a key like any other', () => {
  const parsed = parseAssignments(['__proto__=x'], '--var');
  assert.deepEqual(Object.entries(parsed), [['__proto__', 'x']]);
  assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
});

test('one usage error (exit 2) naming the flag and the key, never the value', () => {
  const table: [string, string][] = [
    ['FOO', 'invalid value "..." for flag --env: expected KEY=VALUE, found no "="'],
    ['s3cr3t-value', 'invalid value "..." for flag --env: expected KEY=VALUE, found no "="'],
    ['=x', 'invalid value "=..." for flag --env: expected KEY=VALUE with KEY a variable name (a letter or _, then letters, digits or _)'],
    ['1A=b', 'invalid value "1A=..." for flag --env: expected KEY=VALUE with KEY a variable name (a letter or _, then letters, digits or _)'],
    ['A-B=c', 'invalid value "A-B=..." for flag --env: expected KEY=VALUE with KEY a variable name (a letter or _, then letters, digits or _)'],
    ['A B=c', 'invalid value "A B=..." for flag --env: expected KEY=VALUE with KEY a variable name (a letter or _, then letters, digits or _)'],
    [
      'DB-PASSWORD=s3cr3t-value',
      'invalid value "DB-PASSWORD=..." for flag --env: expected KEY=VALUE with KEY a variable name (a letter or _, then letters, digits or _)',
    ],
  ];
  for (const [word, message] of table) {
    assert.throws(
      () => parseAssignments(['GOOD=1', word], '--env', "run 'devtool up --help' for usage"),
      (e: unknown) =>
        e instanceof UsageError &&
        e.exitCode === ExitCode.usage &&
        e.message === message &&
        e.hint === "run 'devtool up --help' for usage" &&
        !e.message.includes('s3cr3t-value'),
      word,
    );
  }
});

test('the map back to KEY=VALUE words, in order', () => {
  assert.deepEqual(assignmentWords(parseAssignments(['B=1', 'A=x=y', 'C=', 'B=2'], '--var')), ['B=2', 'A=x=y', 'C=']);
});
