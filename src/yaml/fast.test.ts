import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Path, SourcePos } from './errors.ts';
import { readQuickly, UNREAD } from './fast.ts';
import { parseYaml } from './parse.ts';

const testdata = join(import.meta.dirname, '..', 'compose', 'testdata');
/** Every Compose file of the golden fixtures: what real files look like. */
const fixtures = readdirSync(testdata, { recursive: true, encoding: 'utf8' })
  .filter((f) => /(^|\/)(compose|docker-compose)[^/]*\.ya?ml$/.test(f))
  .map((f) => ({ name: f, text: readFileSync(join(testdata, f), 'utf8') }));

const specials = [
  'a: 010\nb: 0o17\nc: 0x1F\nd: 0b101\ne: 1_000\nf: .5\ng: 1e3\nh: +12\ni: -.inf\nj: .NaN\nk: 2001-12-14\nl: yes\nm: ~\nn:\no: "12"\np: !!str 12\n',
  'a: &a {x: 1, y: 1}\nb: &b {x: 2, y: 2, z: 2}\nc:\n  x: 0\n  <<: [*a, *b]\nd:\n  <<: *a\n  y: 3\n',
  'x: &x [1, 2]\ny: *x\nz: &x [3]\nw: *x\n',
  '__proto__: {polluted: true}\n',
  "text: |\n  line one\n  line two\nfolded: >-\n  a\n  b\nquoted: \"tab\\there\"\nsingle: 'it''s'\n",
  '',
];

function paths(value: unknown, at: Path = []): Path[] {
  if (typeof value !== 'object' || value === null) return [at];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [at, ...keys.flatMap((k) => paths((value as Record<string | number, unknown>)[k], [...at, k]))];
}

const plain = (p: SourcePos) => ({ file: p.file, line: p.line, col: p.col });

test('read quickly, a document gives the values and, when asked, the positions of the exact reading', () => {
  assert.ok(fixtures.length > 20, `fixtures found: ${fixtures.length}`);
  let compared = 0;
  for (const { name, text } of [...fixtures, ...specials.map((text, i) => ({ name: `special ${i}`, text }))]) {
    let refusal: string | undefined;
    try {
      parseYaml(text, 'f.yaml');
    } catch (err) {
      refusal = (err as Error).message;
    }
    if (refusal !== undefined) {
      // An error fixture: refused read quickly too, in the same words.
      assert.throws(() => parseYaml(text, 'f.yaml', { quick: true }), { message: refusal }, name);
      continue;
    }
    assert.notEqual(readQuickly(text, 100_000, 200), UNREAD, `${name} is read quickly`);
    compared++;
    const exact = parseYaml(text, 'f.yaml');
    const quick = parseYaml(text, 'f.yaml', { quick: true });
    assert.deepEqual(quick.value, exact.value, name);
    for (const path of paths(exact.value)) {
      for (const part of ['key', 'value'] as const) {
        assert.deepEqual(plain(quick.sources.locate(quick.value, path, part)), exact.sources.locate(exact.value, path, part), `${name} ${path.join('.')}`);
      }
    }
  }
  assert.ok(compared > 20, `documents compared: ${compared}`);
});

test('aliases read quickly are copies: changing one does not change the others', () => {
  const { value } = parseYaml('a: &a {x: [1]}\nb: *a\nc: *a\n', 'f.yaml', { quick: true });
  const v = value as Record<string, { x: number[] }>;
  v['b']!.x.push(2);
  assert.deepEqual(v['a']!.x, [1]);
  assert.deepEqual(v['c']!.x, [1]);
});

test('what the exact reading refuses or might read apart is left to it, and worded as before', () => {
  const refused: [string, RegExp][] = [
    ['a: 1\na: 2\n', /f\.yaml:2:1: invalid YAML: map keys must be unique/],
    ['? [a, b]\n: 1\n', /a map key must be a plain value/],
    ['a: *nope\n', /./],
    ['a: 1\n---\nb: 2\n', /several documents/],
    ['a: [1, 2\n', /f\.yaml:\d+:\d+: invalid YAML/],
  ];
  for (const [text, message] of refused) {
    assert.equal(readQuickly(text, 100_000, 200), UNREAD, text);
    assert.throws(() => parseYaml(text, 'f.yaml', { quick: true }), message, text);
  }
  // A "<<" value: the exact reading keeps it as a string; read quickly, it could be a merge key.
  assert.equal(readQuickly('a: <<\n', 100_000, 200), UNREAD);
  assert.deepEqual(parseYaml('a: <<\n', 'f.yaml', { quick: true }).value, parseYaml('a: <<\n', 'f.yaml').value);
  let bomb = 'l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i < 8; i++)
    bomb += `l${i}: &l${i} [${Array(10)
      .fill(`*l${i - 1}`)
      .join(', ')}]\n`;
  assert.equal(readQuickly(bomb, 100_000, 200), UNREAD, 'an alias bomb is past the node budget');
  assert.throws(() => parseYaml(bomb, 'f.yaml', { quick: true }), /expands to more than/);
});
