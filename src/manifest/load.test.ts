/**
 * Manifest fixtures, one folder each:
 *   testdata/valid/<case>/devtool.yml (+ fixture.json {env})  ->  expected.json, the normalized manifest
 *   testdata/errors/<case>/devtool.yml                          ->  expected-error.txt, the exact one-line error
 * Every valid fixture must also pass the published JSON Schema, and every error fixture fail it
 * (unless it holds a `schema-accepts` marker: mistakes only the loader can see, such as an
 * unknown depends_on name). UPDATE_GOLDEN=1 rewrites the expected files; review the diff.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { assertGolden } from '../../test/golden.ts';
import { LocatedError } from '../yaml/errors.ts';
import { loadManifest, loadManifestText } from './load.ts';
import { manifestJsonSchema, manifestJsonSchemaText } from './schema.ts';

const testdata = join(import.meta.dirname, 'testdata');
const schemaFile = join(import.meta.dirname, '..', '..', 'schema', 'devtool-manifest.schema.json');
/** The project of every fixture (the repository): `<repo>` in the expected errors, wherever it is checked out. */
const repo = realpathSync(join(import.meta.dirname, '..', '..'));

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validate = ajv.compile(manifestJsonSchema());

function cases(kind: 'valid' | 'errors'): string[] {
  return readdirSync(join(testdata, kind), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

function envOf(dir: string): Record<string, string> {
  const f = join(dir, 'fixture.json');
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as { env: Record<string, string> }).env : {};
}

test('the published schema is the one generated from the loader (UPDATE_GOLDEN=1 rewrites it)', () => {
  assertGolden(schemaFile, manifestJsonSchemaText());
});

test('every field of the schema has a description (editors show them)', () => {
  const missing: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (typeof node !== 'object' || node === null) return;
    const props = (node as { properties?: Record<string, unknown> }).properties;
    for (const [k, v] of Object.entries(props ?? {})) {
      if (!(v as { description?: string }).description) missing.push(`${at}.${k}`);
      walk(v, `${at}.${k}`);
    }
    for (const key of ['items', 'additionalProperties']) walk((node as Record<string, unknown>)[key], `${at}[]`);
    for (const key of ['oneOf', 'anyOf']) for (const b of (node as Record<string, unknown[]>)[key] ?? []) walk(b, at);
  };
  walk(manifestJsonSchema(), '');
  assert.deepEqual(missing, []);
});

for (const name of cases('valid')) {
  test(`valid: ${name}`, () => {
    const dir = join(testdata, 'valid', name);
    const m = loadManifest('devtool.yml', { cwd: dir, env: envOf(dir) });
    const { file, folder, text, ...rest } = m;
    assert.equal(folder, dir);
    assert.equal(file, join(dir, 'devtool.yml'));
    assert.equal(text, readFileSync(file, 'utf8'));
    const actual = `${JSON.stringify(rest, null, 2)}\n`;
    assertGolden(join(dir, 'expected.json'), actual);
    const raw = parse(text) ?? {};
    assert.ok(validate(raw), `the JSON Schema rejects a valid manifest: ${ajv.errorsText(validate.errors)}`);
  });
}

for (const name of cases('errors')) {
  test(`error: ${name}`, () => {
    const dir = join(testdata, 'errors', name);
    let error: unknown;
    try {
      loadManifest('devtool.yml', { cwd: dir, env: envOf(dir) });
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof LocatedError, `expected a located error, got ${String(error)}`);
    assert.ok(!error.message.includes('\n'), 'one line');
    assertGolden(join(dir, 'expected-error.txt'), `${error.message.replaceAll(repo, '<repo>')}\n`);
    let raw: unknown;
    try {
      raw = parse(readFileSync(join(dir, 'devtool.yml'), 'utf8'));
    } catch {
      return; // malformed YAML: nothing for the schema to judge
    }
    const accepts = existsSync(join(dir, 'schema-accepts'));
    assert.equal(validate(raw), accepts, accepts ? 'the schema accepts it (only the loader can tell)' : 'the JSON Schema must reject it too');
  });
}

test('every problem is reported, in file order', () => {
  const text = 'build:\n  api:\n    contxt: .\nservices:\n  web:\n    autocreate: 3\n';
  try {
    loadManifestText(text, '/w/devtool.yml', { cwd: '/w', env: {} });
    assert.fail('expected an error');
  } catch (err) {
    assert.ok(err instanceof LocatedError);
    assert.deepEqual(err.lines(), [
      'devtool.yml:3:5: unknown field "contxt" in build.api (did you mean "context"?)',
      'devtool.yml:6:17: field services.web.autocreate: must be true or false, not the number 3',
    ]);
  }
});

test('unset variables expand to "" with a warning; commands are left to their shell', () => {
  const m = loadManifestText('build:\n  a:\n    image: $REG/a\ndeploy:\n  - echo $REG\n', '/w/devtool.yml', { cwd: '/w', env: {} });
  assert.equal(m.build['a']!.image, '/a');
  assert.equal(m.deploy.commands[0]!.command, 'echo $REG');
  assert.deepEqual(m.warnings, ['variable REG is not set: using an empty string']);
});
