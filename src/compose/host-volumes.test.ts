import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insideProject, planHostVolumes } from './host-volumes.ts';
import { loadCompose } from './load.ts';

function project(volumes: string[], files: Record<string, string | null> = {}) {
  const root = mkdtempSync(join(tmpdir(), 'host-volumes-'));
  const dir = join(root, 'app');
  mkdirSync(dir);
  for (const [path, content] of Object.entries(files)) {
    if (content === null) {
      mkdirSync(join(dir, path), { recursive: true });
      continue;
    }
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const yaml = `services:\n  app:\n    image: x\n    volumes:\n${volumes.map((v) => `      - ${JSON.stringify(v)}\n`).join('')}`;
  writeFileSync(join(dir, 'compose.yaml'), yaml);
  return loadCompose({ cwd: dir, files: [join(dir, 'compose.yaml')], env: {} });
}

test('files and folders with content are baked; missing and empty folders are claims; outside paths are skipped', () => {
  const p = project(
    [
      './nginx.conf:/etc/nginx/nginx.conf:ro',
      './site:/srv/site',
      './data:/var/lib/data',
      './empty:/empty',
      './kept:/kept',
      '.:/app',
      '/etc/localtime:/etc/localtime:ro',
      '../sibling:/sibling',
      '~/.ssh:/root/.ssh',
    ],
    { 'nginx.conf': 'x', 'site/index.html': 'x', empty: null, 'kept/.gitkeep': '', 'kept/.gitignore': '*\n' },
  );
  const outside = { use: 'skip', reason: 'it is outside the Compose folder' };
  assert.deepEqual(planHostVolumes(p), {
    app: {
      '/etc/nginx/nginx.conf': { use: 'bake' },
      '/srv/site': { use: 'bake' },
      '/var/lib/data': { use: 'claim' },
      '/empty': { use: 'claim' },
      '/kept': { use: 'claim' },
      '/app': { use: 'bake' },
      '/etc/localtime': outside,
      '/sibling': outside,
      '/root/.ssh': outside,
    },
  });
});

test('a folder that holds a placeholder and a real file is baked; an unreadable one or a special file is skipped with why', () => {
  const p = project(['./a:/a', './b:/b', './c:/c']);
  const plan = planHostVolumes(p, {
    kind: (path) => (path.endsWith('/c') ? 'other' : 'folder'),
    names: (path) => {
      if (path.endsWith('/b')) throw Object.assign(new Error('denied'), { code: 'EACCES' });
      return ['.gitkeep', 'seed.sql'];
    },
  });
  assert.deepEqual(plan, {
    app: {
      '/a': { use: 'bake' },
      '/b': { use: 'skip', reason: 'it cannot be read (EACCES)' },
      '/c': { use: 'skip', reason: 'it is neither a file nor a folder' },
    },
  });
});

test('insideProject is lexical: the folder itself and what is under it, not a sibling whose name starts alike', () => {
  assert.equal(insideProject('/w/app', '/w/app'), true);
  assert.equal(insideProject('/w/app', '/w/app/x/y'), true);
  assert.equal(insideProject('/w/app', '/w/app2/x'), false);
  assert.equal(insideProject('/w/app', '/w/..app'), false);
  assert.equal(insideProject('/w/app', '/w/app/..data'), true);
  assert.equal(insideProject('/w/app', '/etc/localtime'), false);
});
