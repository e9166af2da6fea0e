import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { scanBuildContext } from '../image/build-context.ts';
import { loadCompose } from '../compose/load.ts';
import { loadManifest } from '../manifest/load.ts';
import { formatSize, INPUT_LIMITS, readInputFile } from './input-file.ts';

const MiB = 1024 * 1024;

/** A file of `size` bytes without writing them (sparse). */
function fileOfSize(path: string, size: number): string {
  writeFileSync(path, '');
  truncateSync(path, size);
  return path;
}

test('a file at the limit is read; one byte over is refused before it is read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'input-'));
  const limit = INPUT_LIMITS.env.bytes;
  assert.equal(readInputFile(fileOfSize(join(dir, 'at'), limit), 'env')?.length, limit);
  const started = performance.now();
  assert.throws(() => readInputFile(fileOfSize(join(dir, 'big.env'), 59 * MiB), 'env', 'big.env'), {
    name: 'DevtoolError',
    message: 'big.env is 59 MiB: an env file may be at most 1 MiB',
  });
  assert.ok(performance.now() - started < 100, 'refused from its size, not read');
  assert.throws(() => readInputFile(fileOfSize(join(dir, 'over'), limit + 1), 'env', 'over'), {
    message: 'over is 1048577 bytes: an env file may be at most 1 MiB',
  });
});

test('no regular file is no text: missing, a folder (a virtualenv named .env), a named pipe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'input-'));
  assert.equal(readInputFile(join(dir, 'missing'), 'env'), undefined);
  mkdirSync(join(dir, '.env'));
  assert.equal(readInputFile(join(dir, '.env'), 'env'), undefined);
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  assert.equal(readInputFile(join(dir, 'pipe'), 'compose'), undefined, 'refused without waiting for a writer');
});

test('sizes are written for people', () => {
  assert.equal(formatSize(512), '512 bytes');
  assert.equal(formatSize(3.5 * 1024), '3.5 KiB');
  assert.equal(formatSize(4 * MiB), '4 MiB');
  assert.equal(formatSize(62_000_000), '59.1 MiB');
  assert.equal(formatSize(3 * 1024 * MiB), '3 GiB');
});

test('every file devtool parses is capped: manifest, Compose files, .env, env_file, .dockerignore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'input-'));
  fileOfSize(join(dir, 'devtool.yml'), 5 * MiB);
  assert.throws(() => loadManifest('devtool.yml', { cwd: dir, env: {} }), { message: 'devtool.yml is 5 MiB: a manifest may be at most 4 MiB' });

  fileOfSize(join(dir, 'compose.yaml'), 4 * MiB + 1);
  assert.throws(() => loadCompose({ cwd: dir, env: {} }), { message: 'compose.yaml is 4194305 bytes: a Compose file may be at most 4 MiB' });

  writeFileSync(join(dir, 'compose.yaml'), 'services:\n  web:\n    image: nginx\n    env_file: [config/web.env]\n');
  fileOfSize(join(dir, '.env'), 2 * MiB);
  assert.throws(() => loadCompose({ cwd: dir, env: {} }), { message: '.env is 2 MiB: an env file may be at most 1 MiB' });

  writeFileSync(join(dir, '.env'), 'A=1\n');
  mkdirSync(join(dir, 'config'));
  fileOfSize(join(dir, 'config', 'web.env'), 3 * MiB);
  assert.throws(() => loadCompose({ cwd: dir, env: {} }), { message: 'config/web.env is 3 MiB: an env file may be at most 1 MiB' });

  writeFileSync(join(dir, 'Dockerfile'), 'FROM scratch\n');
  fileOfSize(join(dir, '.dockerignore'), 2 * MiB);
  await assert.rejects(scanBuildContext(dir, join(dir, 'Dockerfile'), { hash: false }), {
    message: `${join(dir, '.dockerignore')} is 2 MiB: a .dockerignore file may be at most 1 MiB`,
  });
});
