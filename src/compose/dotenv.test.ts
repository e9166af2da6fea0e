import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDotenv } from './dotenv.ts';

const parse = (text: string, env: Record<string, string> = {}) => parseDotenv(text, '.env', { lookup: (n) => env[n] });

test('the dotenv syntax Docker Compose documents', () => {
  const text = [
    '# a comment',
    '',
    'PLAIN=value',
    'SPACED = spaced value   ',
    'export EXPORTED=1',
    'YAML_STYLE: colon',
    'EMPTY=',
    'INLINE=value # comment',
    'HASH=value#not-a-comment',
    "SINGLE='literal $PLAIN \\n'",
    'DOUBLE="expanded ${PLAIN}\\tand\\nnewline \\"quoted\\" \\$PLAIN"',
    'DQ_COMMENT="a # b" # comment',
    'MULTI="line 1',
    'line 2"',
    'REF=${PLAIN}-$PLAIN',
    'DEFAULT=${NOPE:-fallback}',
    'INHERITED',
    'NOT_INHERITED',
  ].join('\n');
  const { values, problems } = parse(text, { INHERITED: 'from env' });
  assert.deepEqual(problems, []);
  assert.deepEqual(Object.fromEntries(values), {
    PLAIN: 'value',
    SPACED: 'spaced value',
    EXPORTED: '1',
    YAML_STYLE: 'colon',
    EMPTY: '',
    INLINE: 'value',
    HASH: 'value#not-a-comment',
    SINGLE: 'literal $PLAIN \\n',
    DOUBLE: 'expanded value\tand\nnewline "quoted" $PLAIN',
    DQ_COMMENT: 'a # b',
    MULTI: 'line 1\nline 2',
    REF: 'value-value',
    DEFAULT: 'fallback',
    INHERITED: 'from env',
  });
});

test('the environment wins over earlier lines of the file in references', () => {
  const { values } = parse('A=file\nB=$A\n', { A: 'shell' });
  assert.equal(values.get('B'), 'shell');
});

test('errors point at the line', () => {
  assert.deepEqual(
    parse('OK=1\nBAD KEY=2\n').problems.map((p) => [p.pos.line, p.message]),
    [[2, 'unexpected character "K" in env file (expected KEY=VALUE)']],
  );
  assert.deepEqual(
    parse('A="open\n').problems.map((p) => [p.pos.line, p.pos.col, p.message]),
    [[1, 3, 'unterminated quoted value for A']],
  );
  assert.deepEqual(
    parse('\n\nA=${NEEDED:?set it}\n').problems.map((p) => [p.pos.line, p.message]),
    [[3, 'required variable NEEDED is not set: set it']],
  );
});

test('raw format takes values literally', () => {
  const { values } = parseDotenv('A="quoted" $X # not a comment\n', 'x.env', { format: 'raw' });
  assert.equal(values.get('A'), '"quoted" $X # not a comment');
});

test('a .env with Windows line endings (\r\n) gives the same values', () => {
  const lines = ['PLAIN=value', 'SPACED = spaced value   ', "SINGLE='literal'", 'DOUBLE="a ${PLAIN}"', 'INLINE=value # comment', 'EMPTY='];
  const unix = parse(`${lines.join('\n')}\n`);
  const windows = parse(`${lines.join('\r\n')}\r\n`);
  assert.deepEqual(windows.problems, []);
  assert.deepEqual(Object.fromEntries(windows.values), Object.fromEntries(unix.values));
});
