import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseYaml } from '../yaml/parse.ts';
import { interpolate, interpolateTree, InterpolationError, type Lookup } from './interpolate.ts';

const vars: Record<string, string> = { SET: 'value', EMPTY: '', FOO: 'foo' };
const lookup: Lookup = (name) => (Object.hasOwn(vars, name) ? vars[name] : undefined);
const run = (text: string): string => interpolate(text, lookup);

test('the forms of the Compose Specification', () => {
  const cases: [string, string][] = [
    ['$SET', 'value'],
    ['${SET}', 'value'],
    ['a${SET}b$SET.c', 'avalueb' + 'value.c'],
    ['${UNSET}', ''],
    ['${SET:-default}', 'value'],
    ['${EMPTY:-default}', 'default'],
    ['${UNSET:-default}', 'default'],
    ['${SET-default}', 'value'],
    ['${EMPTY-default}', ''],
    ['${UNSET-default}', 'default'],
    ['${SET:+alt}', 'alt'],
    ['${EMPTY:+alt}', ''],
    ['${UNSET:+alt}', ''],
    ['${SET+alt}', 'alt'],
    ['${EMPTY+alt}', 'alt'],
    ['${UNSET+alt}', ''],
    ['${SET:?err}', 'value'],
    ['${EMPTY?err}', ''],
    ['$$', '$'],
    ['$$SET', '$SET'],
    ['$${SET}', '${SET}'],
    ['$$$SET', '$value'],
    ['cost $5, 100$, $ alone, $-x', 'cost $5, 100$, $ alone, $-x'],
    ['${UNSET:-${FOO}}', 'foo'],
    ['${UNSET:-${ALSO_UNSET:-deep}}', 'deep'],
    ['${UNSET:-a}b}', 'ab}'],
    ['${UNSET:-with $$ and }}', 'with $ and }'],
    ['${UNSET:-}', ''],
    ['${lower_case}', ''],
  ];
  for (const [input, expected] of cases) {
    assert.equal(run(input), expected, input);
  }
});

test('required variables: the message, evaluated, in the error', () => {
  assert.throws(() => run('${UNSET?$FOO is needed}'), new InterpolationError('required variable UNSET is not set: foo is needed'));
  assert.throws(() => run('${EMPTY:?must not be empty}'), new InterpolationError('required variable EMPTY is empty: must not be empty'));
  assert.throws(() => run('${UNSET:?}'), new InterpolationError('required variable UNSET is not set'));
});

test('defaults are only evaluated when used', () => {
  assert.equal(run('${SET:-${UNSET:?never evaluated}}'), 'value');
});

test('malformed references are errors', () => {
  for (const bad of ['${', '${SET', '${}', '${1A}', '${SET/foo/bar}', '${SET:x}', '${ SET}']) {
    assert.throws(() => run(bad), InterpolationError, bad);
  }
});

test('unset plain references are reported once each, by name', () => {
  const unset: string[] = [];
  interpolate('$A ${B} ${C:-x} ${A}', lookup, (n) => unset.push(n));
  assert.deepEqual(unset, ['A', 'B', 'A']);
});

test('tree interpolation: values only, in place, with located errors', () => {
  const parsed = parseYaml('services:\n  ${SET}:\n    image: app:${SET}\n    env: ["A=${UNSET:?needed}"]\n', 'c.yaml');
  const problems = interpolateTree(parsed.value, parsed.sources, { lookup, localLookup: lookup, onUnset: () => {} });
  const services = (parsed.value as { services: Record<string, { image: string }> }).services;
  assert.deepEqual(Object.keys(services), ['${SET}']);
  assert.equal(services['${SET}']!.image, 'app:value');
  assert.equal(problems.length, 1);
  assert.deepEqual(problems[0], {
    pos: { file: 'c.yaml', line: 4, col: 11 },
    path: ['services', '${SET}', 'env', 0],
    message: 'required variable UNSET is not set: needed',
  });
});

test('tree interpolation uses the local lookup where told (build args)', () => {
  const parsed = parseYaml('a: $X\nb: {args: {T: $X}}\n', 'c.yaml');
  interpolateTree(parsed.value, parsed.sources, {
    lookup: () => 'secret',
    localLookup: () => 'local',
    pathUsesLocal: (p) => p[0] === 'b',
    onUnset: () => {},
  });
  assert.deepEqual(parsed.value, { a: 'secret', b: { args: { T: 'local' } } });
});
