import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../base/errors.ts';
import { parseCliBuildOptions, parseSecretFlag } from './options.ts';
import { withCliOptions, type ImageSpec } from './plan.ts';

const cwd = mkdtempSync(join(tmpdir(), 'build-opts-'));
writeFileSync(join(cwd, 'npmrc'), 'token');

test('--secret id=ID,src=PATH, with buildx spellings (source=, type=file)', () => {
  assert.deepEqual(parseSecretFlag('id=npm,src=npmrc', cwd), { id: 'npm', path: join(cwd, 'npmrc') });
  assert.deepEqual(parseSecretFlag('type=file, id=npm ,source=./npmrc', cwd), { id: 'npm', path: join(cwd, 'npmrc') });
  assert.deepEqual(parseSecretFlag(`src=${join(cwd, 'npmrc')},id=x`, '/'), { id: 'x', path: join(cwd, 'npmrc') });
});

test('a bad --secret is a usage error naming the flag and the problem', () => {
  const cases: [string, RegExp][] = [
    ['npm', /"npm" is not KEY=VALUE/],
    ['id=npm', /src is missing/],
    ['src=npmrc', /the id is missing/],
    ['id=a,src=npmrc,env=X', /unknown field "env"/],
    ['id=a,id=b,src=npmrc', /"id" is given twice/],
    ['type=env,id=a,src=npmrc', /type "env" is not supported/],
    ['id=a,src=missing', /file missing not found/],
  ];
  for (const [value, message] of cases) {
    assert.throws(
      () => parseSecretFlag(value, cwd),
      (e: unknown) => e instanceof UsageError && e.message.includes('--secret') && message.test(e.message),
      value,
    );
  }
});

test('command-line options over an image: --no-cache wins, secrets by id, cache sources first, export replaced', () => {
  const spec: ImageSpec = {
    name: 'api',
    contextDir: '/c',
    dockerfile: '/c/Dockerfile',
    args: {},
    secrets: { npm: '/manifest/npmrc', other: '/o' },
    noCache: false,
    cacheFrom: ['reg/api:cache'],
    exportCache: ['reg/api:cache'],
    dependsOn: [],
  };
  const cli = parseCliBuildOptions(
    { noCache: true, secrets: ['id=npm,src=npmrc'], exportCache: 'reg/api:buildcache', cacheFrom: ['reg/api:main', 'reg/api:cache'] },
    cwd,
  );
  const merged = withCliOptions(spec, cli);
  assert.equal(merged.noCache, true);
  assert.deepEqual(merged.secrets, { npm: join(cwd, 'npmrc'), other: '/o' });
  assert.deepEqual(merged.cacheFrom, ['reg/api:main', 'reg/api:cache']);
  assert.deepEqual(merged.exportCache, ['reg/api:buildcache']);
  assert.deepEqual(withCliOptions(spec, parseCliBuildOptions({ noCache: false, secrets: [], cacheFrom: [] }, cwd)), spec, 'no flags: the image as it is');
});
