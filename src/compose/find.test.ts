import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { findComposeFiles } from './find.ts';

function withDir(files: string[], fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-find-'));
  try {
    for (const f of files) writeFileSync(join(dir, f), 'services: {}\n');
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the default names, in Docker Compose order', () => {
  withDir(['docker-compose.yml', 'compose.yml'], (dir) => assert.deepEqual(findComposeFiles({ cwd: dir }), [join(dir, 'compose.yml')]));
  withDir(['docker-compose.yml', 'docker-compose.yaml'], (dir) => assert.deepEqual(findComposeFiles({ cwd: dir }), [join(dir, 'docker-compose.yaml')]));
  withDir(['compose.yaml', 'compose.yml'], (dir) => assert.deepEqual(findComposeFiles({ cwd: dir }), [join(dir, 'compose.yaml')]));
});

test('--file, repeatable, relative to the working directory, in order', () => {
  withDir(['a.yaml', 'b.yaml', 'compose.yaml'], (dir) => {
    assert.deepEqual(findComposeFiles({ cwd: dir, files: ['b.yaml', join(dir, 'a.yaml')] }), [join(dir, 'b.yaml'), join(dir, 'a.yaml')]);
  });
});

test('clear errors when nothing is found', () => {
  withDir([], (dir) => {
    assert.throws(
      () => findComposeFiles({ cwd: dir }),
      (e: unknown) =>
        e instanceof DevtoolError && /no Compose file in .*compose\.yaml, compose\.yml, docker-compose\.yaml, docker-compose\.yml/.test(e.message),
    );
    assert.throws(() => findComposeFiles({ cwd: dir, files: ['nope.yaml'] }), /Compose file nope\.yaml not found/);
    mkdirSync(join(dir, 'sub'));
    assert.throws(() => findComposeFiles({ cwd: dir, files: ['sub'] }), /is a folder/);
  });
});
