import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { appFileKind, findApp, isComposeFileName, MANIFEST_FILE, missingFile } from './folder.ts';

function folderWith(t: TestContext, files: string[] | Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'app-folder-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const entries = Array.isArray(files) ? files.map((f) => [f, 'services: {}\n'] as const) : Object.entries(files);
  for (const [f, text] of entries) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
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

test('an explicit file is told by its content, relative to the folder or absolute', (t) => {
  const dir = folderWith(t, {
    'deploy/app.compose.yml': 'services:\n  web:\n    image: nginx\n',
    'ops/app.yml': 'deploy:\n  - make deploy\n',
    [MANIFEST_FILE]: 'deploy:\n  compose: compose.yaml\n',
  });
  assert.deepEqual(findApp(dir, 'deploy/app.compose.yml'), { kind: 'compose', files: [join(dir, 'deploy/app.compose.yml')], folder: join(dir, 'deploy') });
  assert.deepEqual(findApp(dir, join(dir, 'ops/app.yml')), { kind: 'manifest', file: join(dir, 'ops/app.yml'), folder: join(dir, 'ops') });
  assert.equal(findApp(dir, 'missing.yml'), undefined, 'a file named but absent is not replaced by the folder default');
  assert.equal(missingFile(dir, ['ops/app.yml', 'missing.yml']), 'missing.yml');
});

test('--file names a Compose file by what it holds, whatever its name', (t) => {
  const dir = folderWith(t, {
    'docker-compose.prod.yml': 'services:\n  web:\n    image: nginx:1.27\n',
    'stack.yaml': '# a stack\nversion: "3.8"\nservices:\n  "web":\n    build: .\n',
    'compose.override.yaml': 'services:\n  web:\n    environment:\n      DEBUG: "1"\n',
    'only-volumes.yaml': 'volumes:\n  data: {}\n',
    'stack.json': '{"services": {"web": {"image": "nginx"}}}',
    'x-only.yml': 'x-common: &c\n  restart: always\n',
    'dev.yml': 'services:\n  web:\n    image: node:20\n    sync:\n      - .:/app\n',
    'dev.json': '{"services": {"web": {"forward": ["8080:80"]}}}',
    'pipeline.yml': 'name: shop\nbuild:\n  api:\n    context: api\n',
    'my.compose.yml': '',
    'devtool.yml': 'services:\n  api:\n    command: bash\n',
    'staging.devtool.yaml': 'services:\n  api:\n    image: node:20\n',
    'empty.yml': '',
    // YAML as people also write it, which only a YAML parser reads: flow style, anchors and merge keys.
    'flow.yaml': '{services: {web: {image: nginx}}, volumes: {d: {}}}\n',
    'anchors.yaml': 'services:\n  web: &web\n    image: nginx\n  worker:\n    <<: *web\n    command: [work]\n',
    'flow-dev.yaml': '{services: {api: {image: node, sync: [".:/app"]}}}\n',
  });
  for (const f of [
    'docker-compose.prod.yml',
    'stack.yaml',
    'compose.override.yaml',
    'only-volumes.yaml',
    'stack.json',
    'x-only.yml',
    'my.compose.yml',
    'flow.yaml',
    'anchors.yaml',
  ]) {
    assert.equal(appFileKind(join(dir, f)), 'compose', f);
  }
  for (const f of ['dev.yml', 'dev.json', 'pipeline.yml', 'empty.yml', 'devtool.yml', 'staging.devtool.yaml', 'flow-dev.yaml'])
    assert.equal(appFileKind(join(dir, f)), 'manifest', f);
  assert.deepEqual(findApp(dir, 'stack.yaml'), { kind: 'compose', files: [join(dir, 'stack.yaml')], folder: dir });
});

test('several --file values are Compose files merged in order; a manifest comes alone', (t) => {
  const dir = folderWith(t, {
    'base/stack.yaml': 'services:\n  web:\n    image: nginx\n',
    'prod.yaml': 'services:\n  web:\n    image: nginx:1.27\n',
    [MANIFEST_FILE]: 'deploy:\n  - make\n',
  });
  assert.deepEqual(findApp(dir, ['base/stack.yaml', 'prod.yaml']), {
    kind: 'compose',
    files: [join(dir, 'base/stack.yaml'), join(dir, 'prod.yaml')],
    folder: join(dir, 'base'),
  });
  assert.throws(() => findApp(dir, ['prod.yaml', MANIFEST_FILE]), /devtool\.yml is a devtool manifest: a manifest is given alone/);
  assert.equal(findApp(dir, ['prod.yaml', 'nope.yaml']), undefined);
});

test('Compose file names', () => {
  for (const name of ['compose.yaml', 'docker-compose.yml', 'app.compose.yml', 'x/prod-compose.YAML']) assert.ok(isComposeFileName(name), name);
  for (const name of ['devtool.yml', 'composer.yml', 'mycompose.yml', 'compose.json']) assert.ok(!isComposeFileName(name), name);
});
