import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadManifestText } from '../manifest/load.ts';
import { LocatedError } from '../yaml/errors.ts';
import { dockerfileImage, isDockerfilePath, manifestImages, selectImages } from './plan.ts';

function project(manifest: string, files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'build-plan-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  writeFileSync(join(dir, 'devtool.yml'), manifest);
  return { dir, load: (env: Record<string, string> = {}) => loadManifestText(manifest, join(dir, 'devtool.yml'), { cwd: dir, env }) };
}

test('paths resolve from the manifest folder: context, dockerfile in the context, secrets', () => {
  const p = project('build:\n  api:\n    context: api\n    dockerfile: docker/Dockerfile\n    secrets: {npm: .npmrc}\n', {
    'api/docker/Dockerfile': 'FROM x',
    '.npmrc': 't',
  });
  const [api] = manifestImages(p.load(), p.dir);
  assert.equal(api!.contextDir, join(p.dir, 'api'));
  assert.equal(api!.dockerfile, join(p.dir, 'api/docker/Dockerfile'));
  assert.deepEqual(api!.secrets, { npm: join(p.dir, '.npmrc') });
});

test('build args: $VAR resolves from the environment; a bare KEY takes its value', () => {
  const p = project('build:\n  api:\n    args:\n      - VERSION=$APP_VERSION\n      - NODE_ENV\n      - LITERAL=$$HOME\n', { Dockerfile: 'FROM x' });
  const [api] = manifestImages(p.load({ APP_VERSION: '1.2.3', NODE_ENV: 'production' }), p.dir);
  assert.deepEqual(api!.args, { VERSION: '1.2.3', NODE_ENV: 'production', LITERAL: '$HOME' });
});

test('a missing Dockerfile, context or secret file is located in devtool.yml (every one reported)', () => {
  const p = project('build:\n  api:\n    dockerfile: nope/Dockerfile\n  web:\n    context: web\n  db:\n    secrets:\n      pw: missing.txt\n', {
    Dockerfile: 'FROM x',
  });
  let err: unknown;
  try {
    manifestImages(p.load(), p.dir);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof LocatedError);
  assert.deepEqual(err.lines(), [
    'devtool.yml:3:17: field build.api.dockerfile: Dockerfile nope/Dockerfile not found',
    'devtool.yml:5:14: field build.web.context: build context web is not a folder',
    'devtool.yml:8:11: field build.db.secrets.pw: secret file missing.txt not found',
  ]);
});

test('a missing default Dockerfile points at the image', () => {
  const p = project('build:\n  api: {context: .}\n');
  assert.throws(() => manifestImages(p.load(), p.dir), /^LocatedError: devtool.yml:2:8: field build.api.dockerfile: Dockerfile Dockerfile not found$/m);
});

test('named images come with what they depend on, dependencies first', () => {
  const p = project('build:\n  web: {depends_on: [base]}\n  api: {depends_on: [base, web]}\n  base: {}\n  other: {}\n', { Dockerfile: 'FROM x' });
  const specs = manifestImages(p.load(), p.dir);
  assert.deepEqual(
    selectImages(specs, []).map((s) => s.name),
    ['base', 'web', 'api', 'other'],
  );
  assert.deepEqual(
    selectImages(specs, ['api']).map((s) => s.name),
    ['base', 'web', 'api'],
  );
  assert.deepEqual(
    selectImages(specs, ['other', 'web']).map((s) => s.name),
    ['other', 'base', 'web'],
  );
  assert.throws(() => selectImages(specs, ['wbe']), /unknown image "wbe" \(did you mean "web"\?\): the build section has web, api, base, other/);
});

test('-f tells a Dockerfile from a manifest by its name, else by its first line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'build-f-'));
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  assert.ok(isDockerfilePath(write('Dockerfile', '')));
  assert.ok(isDockerfilePath(write('api.Dockerfile', '')));
  assert.ok(isDockerfilePath(write('Dockerfile.dev', '')));
  assert.ok(isDockerfilePath(write('Containerfile', '')));
  assert.ok(isDockerfilePath(write('build-me', '# a comment\n\nFROM debian\n')));
  assert.ok(isDockerfilePath(write('with-syntax', '# syntax=docker/dockerfile:1\nFROM debian\n')));
  assert.ok(!isDockerfilePath(write('devtool.yml', 'FROM: x\n')));
  assert.ok(!isDockerfilePath(write('manifest', 'build:\n  api: {}\n')));
});

test('build -f: the context is the Dockerfile folder, the image is named after it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'build-f-'));
  mkdirSync(join(dir, 'My Web'));
  writeFileSync(join(dir, 'My Web', 'Dockerfile'), 'FROM x');
  const spec = dockerfileImage('My Web/Dockerfile', dir);
  assert.equal(spec.contextDir, join(dir, 'My Web'));
  assert.equal(spec.name, 'My Web');
  assert.throws(() => dockerfileImage('nope/Dockerfile', dir), /--file: Dockerfile nope\/Dockerfile not found/);
});
