/**
 * `devtool init` end to end: the interactive flow in a real pseudo-terminal (answers typed at the
 * prompts), the no-terminal and existing-file refusals, and `-v1`. Each written manifest must load
 * with the manifest loader.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderStignore } from '../../src/init/ignore.ts';
import { loadManifest } from '../../src/manifest/load.ts';
import { createSandbox, repoRoot, runDevtool } from './cli.ts';
import { KEY, runInPty } from './pty.ts';

const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-init-e2e-'));
  made.push(dir);
  cpSync(join(repoRoot, 'src', 'init', 'testdata', 'node-k8s'), dir, { recursive: true });
  rmSync(join(dir, 'expected-devtool.yml'));
  return dir;
}

test('interactive init in a terminal: the answers typed end up in the manifest', { timeout: 60_000 }, async () => {
  const dir = project();
  const sandbox = createSandbox();
  const pty = runInPty(['init'], { cwd: dir, env: sandbox.env });
  await pty.waitFor('How is this application deployed?');
  await pty.waitFor('kubectl apply -f k8s');
  pty.type(KEY.enter); // the guess (kubectl) is the default
  await pty.waitFor('Which service do you want to develop?');
  pty.type('web');
  pty.type(KEY.enter);
  await pty.waitFor('Which port does it listen on? (Enter for 4000)');
  pty.type('8081');
  pty.type(KEY.enter);
  const code = await pty.exit();
  assert.equal(code, 0, pty.output());
  assert.match(pty.output(), /devtool\.yml created/);
  // An answered prompt shows the answer alone, not what Enter would have answered.
  const screen = pty.output();
  assert.match(screen, /Which service do you want to develop\? web\r?$/m);
  assert.match(screen, /Which port does it listen on\? 8081\r?$/m);
  assert.doesNotMatch(screen, /Enter for [^)]*\) (web|8081)/);
  const m = loadManifest('devtool.yml', { cwd: dir, env: {} });
  assert.deepEqual(
    m.deploy.commands.map((c) => c.command),
    ['kubectl apply -f k8s'],
  );
  assert.deepEqual(Object.keys(m.services), ['web']);
  assert.deepEqual(m.services['web']!.forward, [{ local: 8081, remote: 8081 }]);
  assert.deepEqual(m.services['web']!.sync, [{ local: '.', remote: '/app', mode: 'two-way' }]);
  assert.equal(m.services['web']!.image, undefined, "no public image: up keeps the swapped Deployment's");
  assert.equal(m.services['web']!.autocreate, false, 'the manifests define the Deployment to swap');
  assert.deepEqual(Object.keys(m.build), [m.name]);
  assert.match(readFileSync(join(dir, '.stignore'), 'utf8'), /^\(\?d\)node_modules$/m);
});

test('choosing another deploy method with the arrow keys', { timeout: 60_000 }, async () => {
  const dir = project();
  const pty = runInPty(['init', '--file', 'other.yml'], { cwd: dir, env: createSandbox().env });
  await pty.waitFor('none for now');
  pty.type(KEY.down);
  pty.type(KEY.enter);
  await pty.waitFor('Which service');
  pty.type(KEY.enter);
  await pty.waitFor('Which port');
  pty.type(KEY.enter);
  assert.equal(await pty.exit(), 0, pty.output());
  const m = loadManifest('other.yml', { cwd: dir, env: {} });
  assert.deepEqual(m.deploy.commands, []);
  const dev = m.services[Object.keys(m.services)[0]!]!;
  assert.deepEqual(dev.forward, [{ local: 4000, remote: 4000 }]);
  assert.equal(dev.autocreate, true, 'nothing deployed, nothing to swap: up creates the dev container');
  assert.equal(dev.image, undefined, 'up runs the image the build section builds');
});

test('with no terminal, init fails at once naming -v1; -v1 writes the guessed manifest', () => {
  const dir = project();
  const r = runDevtool(['init'], { cwd: dir });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /-v1/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.ok(!existsSync(join(dir, 'devtool.yml')));

  for (const flag of ['-v1', '--v1']) {
    rmSync(join(dir, 'devtool.yml'), { force: true });
    const ok = runDevtool(['init', flag], { cwd: dir });
    assert.equal(ok.code, 0, ok.stderr);
    const m = loadManifest('devtool.yml', { cwd: dir, env: {} });
    assert.deepEqual(
      m.deploy.commands.map((c) => c.command),
      ['kubectl apply -f k8s'],
    );
  }
});

test('an existing manifest is never overwritten without --replace', () => {
  const dir = project();
  writeFileSync(join(dir, 'devtool.yml'), 'name: mine\n');
  const r = runDevtool(['init', '-v1'], { cwd: dir });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--replace/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.equal(readFileSync(join(dir, 'devtool.yml'), 'utf8'), 'name: mine\n');
  const replaced = runDevtool(['init', '-v1', '--replace'], { cwd: dir });
  assert.equal(replaced.code, 0, replaced.stderr);
  assert.match(readFileSync(join(dir, 'devtool.yml'), 'utf8'), /kubectl apply -f k8s/);
});

test('init proposes a .stignore for every ecosystem it finds, and keeps an existing one', () => {
  const dir = project();
  writeFileSync(join(dir, 'go.mod'), 'module example.com/api\n\ngo 1.22\n');
  const r = runDevtool(['init', '-v1'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\.stignore created \(for npm, go\)/);
  const text = readFileSync(join(dir, '.stignore'), 'utf8');
  assert.equal(text, renderStignore(['npm', 'go']));
  assert.match(text, /^\(\?d\)node_modules$/m);
  assert.match(text, /^\(\?d\)\/bin$/m);

  // A .stignore of the user's is never rewritten; init says what it lacks.
  writeFileSync(join(dir, '.stignore'), 'node_modules\n.git\n');
  const again = runDevtool(['init', '-v1', '--replace'], { cwd: dir });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(readFileSync(join(dir, '.stignore'), 'utf8'), 'node_modules\n.git\n');
  assert.match(again.stdout, /! \.stignore exists and is kept as it is; init would also ignore: \.devtool \.env .*\(\?d\)dist .*\(\?d\)\/bin/);
  assert.doesNotMatch(again.stdout, /node_modules/);
});
