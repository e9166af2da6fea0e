import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { findApp, isComposeFileName, MANIFEST_FILE } from './folder.ts';

function folderWith(t: TestContext, files: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'app-folder-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of files) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), 'services: {}\n');
  }
  return dir;
}

test('devtool.yml wins over a Compose file; without it, the first Compose file Docker Compose looks for', (t) => {
  const both = folderWith(t, [MANIFEST_FILE, 'compose.yaml']);
  assert.deepEqual(findApp(both), { kind: 'manifest', file: join(both, 'devtool.yml'), folder: both });
  const compose = folderWith(t, ['docker-compose.yml', 'compose.yml']);
  assert.deepEqual(findApp(compose), { kind: 'compose', files: [join(compose, 'compose.yml')], folder: compose });
  assert.equal(findApp(folderWith(t, ['README.md'])), undefined);
});

test('an explicit file is a Compose file when its name says so, else a manifest, relative to the folder or absolute', (t) => {
  const dir = folderWith(t, ['deploy/app.compose.yml', 'ops/app.yml', MANIFEST_FILE]);
  assert.deepEqual(findApp(dir, 'deploy/app.compose.yml'), { kind: 'compose', files: [join(dir, 'deploy/app.compose.yml')], folder: join(dir, 'deploy') });
  assert.deepEqual(findApp(dir, join(dir, 'ops/app.yml')), { kind: 'manifest', file: join(dir, 'ops/app.yml'), folder: join(dir, 'ops') });
  assert.equal(findApp(dir, 'missing.yml'), undefined, 'a file named but absent is not replaced by the folder default');
});

test('Compose file names', () => {
  for (const name of ['compose.yaml', 'docker-compose.yml', 'app.compose.yml', 'x/prod-compose.YAML']) assert.ok(isComposeFileName(name), name);
  for (const name of ['devtool.yml', 'composer.yml', 'mycompose.yml', 'compose.json']) assert.ok(!isComposeFileName(name), name);
});
