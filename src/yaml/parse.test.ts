import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocatedError } from './errors.ts';
import { parseYaml } from './parse.ts';

function errorOf(text: string): string {
  try {
    parseYaml(text, 'f.yaml');
  } catch (err) {
    assert.ok(err instanceof LocatedError, String(err));
    return err.message;
  }
  assert.fail('expected an error');
}

test('values keep the position they were written at', () => {
  const r = parseYaml('services:\n  web:\n    ports:\n      - "8080:80"\n      - 9000\n', 'compose.yaml');
  assert.deepEqual(r.value, { services: { web: { ports: ['8080:80', 9000] } } });
  assert.deepEqual(r.sources.locate(r.value, ['services', 'web', 'ports', 1]), { file: 'compose.yaml', line: 5, col: 9 });
  assert.deepEqual(r.sources.locate(r.value, ['services', 'web'], 'key'), { file: 'compose.yaml', line: 2, col: 3 });
  // A path beyond what exists points at the deepest part that does.
  assert.deepEqual(r.sources.locate(r.value, ['services', 'web', 'image']), { file: 'compose.yaml', line: 3, col: 5 });
});

test('merge keys: explicit keys win wherever written, earlier sources win over later ones', () => {
  const text = ['a: &a {x: 1, y: 1}', 'b: &b {x: 2, y: 2, z: 2}', 'c:', '  x: 0', '  <<: [*a, *b]', 'd:', '  <<: *a', '  y: 3'].join('\n');
  const { value } = parseYaml(text, 'f.yaml');
  assert.deepEqual((value as Record<string, unknown>)['c'], { x: 0, y: 1, z: 2 });
  assert.deepEqual((value as Record<string, unknown>)['d'], { x: 1, y: 3 });
});

test('merged values point at where they were written (the anchor)', () => {
  const r = parseYaml('x: &e\n  A: 1\ny:\n  <<: *e\n', 'f.yaml');
  assert.deepEqual(r.sources.locate(r.value, ['y', 'A']), { file: 'f.yaml', line: 2, col: 6 });
});

test('aliases are copies: changing one does not change the others', () => {
  const { value } = parseYaml('a: &x {k: v}\nb: *x\n', 'f.yaml');
  const v = value as Record<string, Record<string, string>>;
  v['b']!['k'] = 'changed';
  assert.equal(v['a']!['k'], 'v');
});

test('a "__proto__" key is an ordinary key', () => {
  const { value } = parseYaml('__proto__: {polluted: true}\n', 'f.yaml');
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.deepEqual(Object.keys(value as object), ['__proto__']);
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

test('malformed YAML is a located error', () => {
  assert.match(errorOf('a: [1, 2\nb: 3\n'), /^f\.yaml:\d+:\d+: invalid YAML: /);
  assert.equal(errorOf('a: 1\na: 2\n'), 'f.yaml:2:1: invalid YAML: map keys must be unique');
  assert.match(errorOf('a: 1\n---\nb: 2\n'), /holds several documents/);
});

test('hostile documents end in located errors, not hangs or crashes', () => {
  assert.equal(errorOf('a: &a [*a]\n'), 'f.yaml:1:8: alias *a refers to itself');
  assert.match(errorOf('a: &x {<<: *x}\n'), /alias \*x refers to itself/);
  let bomb = 'l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i < 10; i++)
    bomb += `l${i}: &l${i} [${Array(10)
      .fill(`*l${i - 1}`)
      .join(', ')}]\n`;
  const start = Date.now();
  assert.match(errorOf(bomb), /expands to more than/);
  assert.ok(Date.now() - start < 2000);
  assert.match(errorOf(`a: ${'['.repeat(500)}${']'.repeat(500)}\n`), /nested/);
  assert.match(errorOf('['.repeat(20000)), /nested too deeply|invalid YAML/);
});

test('a long document that repeats little is read past 100,000 values; a bomb is still refused', () => {
  // 15,000 services of 8 values each (4 of them merged): about 120,000 values from 0.7 MB of text.
  const lines = ['x-c: &c {restart: always, labels: {a: b}}', 'services:'];
  for (let i = 0; i < 15_000; i++) lines.push(`  s${i}: {<<: *c, image: img, ports: [80]}`);
  const r = parseYaml(`${lines.join('\n')}\n`, 'f.yaml');
  assert.equal(Object.keys((r.value as { services: object }).services).length, 15_000);
  let bomb = `pad: "${'x'.repeat(200_000)}"\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n`;
  for (let i = 1; i < 10; i++)
    bomb += `l${i}: &l${i} [${Array(10)
      .fill(`*l${i - 1}`)
      .join(', ')}]\n`;
  assert.match(errorOf(bomb), /expands to more than 200/);
});

test('merge keys take maps only', () => {
  assert.match(errorOf('a: {<<: [1, 2]}\n'), /merge key \(<<\) takes a map/);
  assert.match(errorOf('s: &s [1]\na: {<<: *s}\n'), /merge key \(<<\) takes a map/);
});

test('an empty document is null', () => {
  assert.equal(parseYaml('', 'f.yaml').value, null);
  assert.equal(parseYaml('# only a comment\n', 'f.yaml').value, null);
});
