import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentName, repositoryName, sanitizeName } from './name.ts';

test('sanitizes to a DNS-1123 label', () => {
  assert.equal(sanitizeName('My_App.v2'), 'my-app-v2');
  assert.equal(sanitizeName('--x--'), 'x');
  assert.equal(sanitizeName('a'.repeat(70)).length, 63);
});

test('uses the origin remote name, from a nested folder too', () => {
  const root = mkdtempSync(join(tmpdir(), 'name-'));
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, '.git', 'config'), '[core]\n\tbare = false\n[remote "upstream"]\n\turl = x/other.git\n[remote "origin"]\n\turl = git@github.com:acme/Movies-App.git\n');
  mkdirSync(join(root, 'sub', 'dir'), { recursive: true });
  assert.equal(repositoryName(join(root, 'sub', 'dir')), 'Movies-App');
  assert.equal(environmentName(undefined, join(root, 'sub', 'dir')), 'movies-app');
});

test('falls back to the folder name, and --name wins', () => {
  const root = mkdtempSync(join(tmpdir(), 'name-'));
  const folder = join(root, 'Shop Front');
  mkdirSync(folder);
  assert.equal(environmentName(undefined, folder), 'shop-front');
  assert.equal(environmentName('Demo', folder), 'demo');
  assert.throws(() => environmentName('___', folder), /--name/);
});
