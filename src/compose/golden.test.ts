/**
 * Golden fixtures, one folder per rule, as Kompose tests its translation:
 *   testdata/<rule>/compose.yaml (+ .env, env files, more Compose files)  the input
 *   testdata/<rule>/fixture.json (optional)  {files, env, secrets, name, namespace, endpointDomain, ingressClass, images}
 *   testdata/<rule>/expected.yaml  the objects (multi-document YAML), after a comment header with
 *                                  the rollout order, public URLs and warnings
 *   testdata/errors/<case>/expected-error.txt  the exact one-line error
 * UPDATE_GOLDEN=1 rewrites the expected files; review the diff by hand: they are the specification.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertGolden } from '../../test/golden.ts';
import { DevtoolError } from '../base/errors.ts';
import { LocatedError } from '../yaml/errors.ts';
import { render, runFixture, testdata } from './testing.ts';

const ruleDirs = readdirSync(testdata, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'errors')
  .map((d) => d.name)
  .sort();

test('there is a golden fixture per rule', () => {
  assert.ok(ruleDirs.length >= 30, `only ${ruleDirs.length} fixtures`);
});

for (const name of ruleDirs) {
  test(`golden: ${name}`, () => {
    const dir = join(testdata, name);
    const actual = render(runFixture(dir));
    assertGolden(join(dir, 'expected.yaml'), actual);
  });
}

const errorDirs = readdirSync(join(testdata, 'errors'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

for (const name of errorDirs) {
  test(`error: ${name}`, () => {
    const dir = join(testdata, 'errors', name);
    let error: unknown;
    try {
      runFixture(dir);
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof DevtoolError, `expected a DevtoolError, got ${String(error)}`);
    assert.ok(error instanceof LocatedError, `expected a located error, got: ${error.message}`);
    assert.ok(!error.message.includes('\n'), 'the message is one line');
    assertGolden(join(dir, 'expected-error.txt'), `${error.message}\n`);
  });
}
