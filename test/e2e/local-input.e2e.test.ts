/**
 * Local input end to end: what is in the project folder never crashes a command or
 * takes it minutes. A `.git` without its config (a container's `.git` synced in) gives the folder
 * name; a manifest far over the size limit is refused from its size, at once, in one line.
 * No cluster: the kubeconfig fixture points at fake servers, and nothing here contacts them.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, lines, runDevtool } from './cli.ts';

before(() => ensureBuilt());

test('a .git without config: the environment is named after the folder', () => {
  const project = join(mkdtempSync(join(tmpdir(), 'devtool-gitless-')), 'Shop Front');
  mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(project, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(project, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\n');
  writeFileSync(join(project, 'compose.yaml'), 'services:\n  api:\n    image: nginx:1\n');
  const r = runDevtool(['deploy', '--dry-run', '--namespace', 'shop'], { cwd: project });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /devtool\.dev\/environment: shop-front$/m);
});

test('a 59 MB manifest is refused at once from its size: one line, exit code 1', () => {
  const project = mkdtempSync(join(tmpdir(), 'devtool-huge-'));
  // Real YAML, not zeros: without the limit, all of it would be parsed.
  const fd = openSync(join(project, 'devtool.yml'), 'w');
  writeSync(fd, 'deploy:\n');
  const block = '  - echo hello from a very long manifest\n'.repeat(25_000);
  for (let written = 0; written < 59_000_000; written += block.length) writeSync(fd, block);
  closeSync(fd);
  const started = Date.now();
  const r = runDevtool(['deploy', '--namespace', 'shop'], { cwd: project });
  const seconds = (Date.now() - started) / 1000;
  assert.equal(r.code, 1, r.stderr);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /^Error: devtool\.yml is 5\d\.\d MiB: a manifest may be at most 4 MiB\n$/);
  // Parsing it took 5.3 s and 1.1 GB; refusing it costs the start of the process.
  assert.ok(seconds < 3, `took ${seconds} s`);
});
