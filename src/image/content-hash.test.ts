import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentHash, contentTag, type HashInputs } from './content-hash.ts';
import { scanBuildContext } from './build-context.ts';

/** A context folder: { 'path': content } (a trailing / makes a folder). */
function folder(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'build-ctx-'));
  for (const [path, content] of Object.entries(files)) {
    if (path.endsWith('/')) mkdirSync(join(root, path), { recursive: true });
    else {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), content);
    }
  }
  return root;
}

async function hashOf(dir: string, extra: Partial<HashInputs> = {}, dockerfile = join(dir, 'Dockerfile')): Promise<string> {
  const s = await scanBuildContext(dir, dockerfile, { hash: true });
  return contentHash({ dockerfile: s.dockerfile.text, entries: s.entries, args: {}, secretIds: [], ...extra });
}

const app = { Dockerfile: 'FROM x\nCOPY . /app\n', 'src/main.js': 'console.log(1)\n', 'notes.log': 'x', 'tmp/cache.bin': 'c', '.dockerignore': '*.log\ntmp\n' };

test('the tag is a function of the content: the same files give the same tag, mtimes do not count', async () => {
  const a = folder(app);
  const b = folder(app);
  utimesSync(join(b, 'src/main.js'), new Date(0), new Date(0));
  assert.equal(await hashOf(a), await hashOf(b));
  assert.match(contentTag(await hashOf(a)), /^devtool-[0-9a-f]{24}$/);
});

test('files .dockerignore excludes do not change the tag; kept files do', async () => {
  const dir = folder(app);
  const before = await hashOf(dir);
  writeFileSync(join(dir, 'notes.log'), 'changed');
  writeFileSync(join(dir, 'tmp/cache.bin'), 'changed');
  writeFileSync(join(dir, 'other.log'), 'new');
  assert.equal(await hashOf(dir), before, 'ignored files are not inputs');
  writeFileSync(join(dir, 'src/main.js'), 'console.log(2)\n');
  assert.notEqual(await hashOf(dir), before, 'a kept file is');
});

test('a new file, a file mode, a symlink target and the ignore file itself are inputs', async () => {
  const dir = folder(app);
  const h0 = await hashOf(dir);
  writeFileSync(join(dir, 'src/new.js'), '');
  const h1 = await hashOf(dir);
  assert.notEqual(h1, h0);
  chmodSync(join(dir, 'src/new.js'), 0o755);
  const h2 = await hashOf(dir);
  assert.notEqual(h2, h1);
  symlinkSync('main.js', join(dir, 'src/link'));
  const h3 = await hashOf(dir);
  assert.notEqual(h3, h2);
  writeFileSync(join(dir, '.dockerignore'), '*.log\ntmp\n# a comment changes the file\n');
  assert.notEqual(await hashOf(dir), h3);
});

test('the Dockerfile, args, target and secret ids are inputs; secret contents are not', async () => {
  const dir = folder(app);
  const base = await hashOf(dir);
  assert.notEqual(await hashOf(dir, { args: { A: '1' } }), base);
  assert.notEqual(await hashOf(dir, { args: { A: '1' } }), await hashOf(dir, { args: { A: '2' } }));
  assert.equal(await hashOf(dir, { args: { A: '1', B: '2' } }), await hashOf(dir, { args: { B: '2', A: '1' } }), 'argument order does not matter');
  assert.notEqual(await hashOf(dir, { target: 'dev' }), base);
  assert.notEqual(await hashOf(dir, { secretIds: ['npmrc'] }), base);
  writeFileSync(join(dir, 'Dockerfile'), 'FROM y\nCOPY . /app\n');
  assert.notEqual(await hashOf(dir), base);
});

test('ignore patterns follow Docker: parent folders, ! exceptions, root-only globs', async () => {
  const dir = folder({
    Dockerfile: 'FROM x',
    'a.log': '',
    'sub/b.log': '',
    'build/out': '',
    'build/keep.txt': '',
    'node_modules/m/index.js': '',
    '.dockerignore': '*.log\nbuild\n!build/keep.txt\nnode_modules\n',
  });
  const s = await scanBuildContext(dir, join(dir, 'Dockerfile'), { hash: false });
  assert.deepEqual(
    s.entries.map((e) => `${e.type[0]} ${e.path}`),
    ['f .dockerignore', 'f Dockerfile', 'f build/keep.txt', 'd sub', 'f sub/b.log'],
  );
});

test('<Dockerfile>.dockerignore next to the Dockerfile replaces .dockerignore', async () => {
  const dir = folder({
    'docker/app.Dockerfile': 'FROM x',
    'docker/app.Dockerfile.dockerignore': 'secret.txt\n',
    'secret.txt': 's',
    'a.log': '',
    '.dockerignore': '*.log\n',
  });
  const s = await scanBuildContext(dir, join(dir, 'docker/app.Dockerfile'), { hash: false });
  const paths = s.entries.map((e) => e.path);
  assert.ok(!paths.includes('secret.txt'));
  assert.ok(paths.includes('a.log'));
  assert.equal(s.ignoreFile, join(dir, 'docker/app.Dockerfile.dockerignore'));
});

test('a Dockerfile outside the context, or excluded from it, is sent under a name of its own', async () => {
  const outside = folder({ 'Dockerfile.web': 'FROM x' });
  const ctx = folder({ 'index.html': '', '.dockerignore': 'Dockerfile\n', Dockerfile: 'FROM y' });
  const a = await scanBuildContext(ctx, join(outside, 'Dockerfile.web'), { hash: false });
  assert.equal(a.dockerfile.inContext, false);
  assert.match(a.dockerfile.nameInContext, /^\.dockerfile\.devtool-[0-9a-f]{12}$/);
  const b = await scanBuildContext(ctx, join(ctx, 'Dockerfile'), { hash: false });
  assert.equal(b.dockerfile.inContext, false, 'excluded by .dockerignore, still sent');
  assert.equal(b.dockerfile.text.toString(), 'FROM y');
});

test("git's own files are not part of the context: a commit of the same tree keeps the tag", async () => {
  const root = folder({
    Dockerfile: 'FROM x\n',
    'app.js': '1',
    '.git/HEAD': 'ref: a\n',
    'lib/sub/.git': 'gitdir: ../../.git/modules/sub\n',
    '.gitignore': 'x',
  });
  const scanned = await scanBuildContext(root, join(root, 'Dockerfile'), { hash: true });
  assert.deepEqual(
    scanned.entries.map((e) => e.path),
    ['.gitignore', 'Dockerfile', 'app.js', 'lib', 'lib/sub'],
  );
  const before = contentHash({ dockerfile: scanned.dockerfile.text, entries: scanned.entries, args: {}, secretIds: [] });
  writeFileSync(join(root, '.git', 'HEAD'), 'ref: b\n');
  const again = await scanBuildContext(root, join(root, 'Dockerfile'), { hash: true });
  assert.equal(contentHash({ dockerfile: again.dockerfile.text, entries: again.entries, args: {}, secretIds: [] }), before);
});
