/**
 * The `.stignore` init proposes, ecosystems -> lines: golden files in ignore-testdata/<case>.stignore
 * (UPDATE_GOLDEN=1 rewrites; review the diff), and what the patterns match read the way Syncthing
 * v1.30 reads them (sync/ignore-match.ts follows lib/ignore).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertGolden } from '../../test/golden.ts';
import { lineRegexes } from '../sync/ignore-match.ts';
import { plainIgnoreNames } from '../sync/watcher.ts';
import { ignorePatterns, missingPatterns, renderStignore } from './ignore.ts';
import { ecosystemsOf, type Ecosystem } from './inspect.ts';

const golden = join(import.meta.dirname, 'ignore-testdata');
const CASES: Record<string, Ecosystem[]> = {
  none: [],
  npm: ['npm'],
  python: ['python'],
  go: ['go'],
  maven: ['maven'],
  gradle: ['gradle'],
  cargo: ['cargo'],
  bundler: ['bundler'],
  composer: ['composer'],
  dotnet: ['dotnet'],
  'npm-go': ['npm', 'go'],
  'maven-cargo': ['maven', 'cargo'],
};

for (const [name, ecosystems] of Object.entries(CASES)) {
  test(`.stignore proposed for ${name}`, () => {
    assertGolden(join(golden, `${name}.stignore`), renderStignore(ecosystems));
  });
}

test('the rendered file holds exactly the patterns, each once', () => {
  const text = renderStignore(['maven', 'cargo', 'npm']);
  const lines = text.split('\n').filter((l) => l && !l.startsWith('//'));
  assert.deepEqual(lines, ignorePatterns(['maven', 'cargo', 'npm']));
  assert.equal(lines.filter((l) => l === '(?d)target').length, 1);
});

test('markers at the top give the ecosystems, several at once', () => {
  assert.deepEqual(ecosystemsOf(['go.mod', 'package.json', 'README.md']), ['npm', 'go']);
  assert.deepEqual(ecosystemsOf(['pom.xml']), ['maven']);
  assert.deepEqual(ecosystemsOf(['settings.gradle.kts']), ['gradle']);
  assert.deepEqual(ecosystemsOf(['Api.csproj']), ['dotnet']);
  assert.deepEqual(ecosystemsOf(['pyproject.toml', 'requirements.txt', 'Gemfile', 'composer.json', 'Cargo.toml']), ['python', 'cargo', 'bundler', 'composer']);
  assert.deepEqual(ecosystemsOf(['src', 'csproj']), []);
});

/** Whether any pattern of the proposal ignores `path`, as Syncthing reads it. */
const ignored = (ecosystems: Ecosystem[], path: string) => ignorePatterns(ecosystems).some((p) => lineRegexes(p).some((r) => r.test(path)));

test('the patterns mean what they say: plain names at any depth, "/" at the top only', () => {
  assert.ok(ignored(['npm'], 'node_modules'));
  assert.ok(ignored(['npm'], 'node_modules/react/index.js'));
  assert.ok(ignored(['npm'], 'packages/web/node_modules/react/index.js'));
  assert.ok(!ignored(['npm'], 'src/node_modules.ts'));
  assert.ok(ignored(['go'], 'bin/api'));
  assert.ok(!ignored(['go'], 'cmd/bin/main.go'), 'a bin folder of sources below the top is synced');
  assert.ok(!ignored(['go'], 'vendor/github.com/x/y.go'), "Go's vendor is source");
  assert.ok(ignored(['composer'], 'vendor/autoload.php'));
  assert.ok(ignored(['dotnet'], 'src/Api/obj/project.assets.json'));
  assert.ok(ignored(['python'], 'app/__pycache__/x.cpython-312.pyc'));
  assert.ok(ignored([], '.git/HEAD') && ignored([], '.env') && !ignored([], 'src/env.ts'));
});

test('both watchers skip every folder the proposal names plainly, (?d) or not', () => {
  const all = Object.keys(CASES).flatMap((c) => CASES[c]!);
  const skipped = plainIgnoreNames(renderStignore(all));
  for (const name of ['node_modules', '.venv', '__pycache__', '/bin', 'target', 'build', '.gradle', '/vendor/bundle', '/vendor', 'bin', 'obj', '.git'])
    assert.ok(skipped.has(name) || name.includes('/', 1), `${name} is watched`);
  assert.ok(!skipped.has('*.pyc'));
});

test('an existing .stignore: what it lacks of the proposal, prefixes aside', () => {
  assert.deepEqual(missingPatterns('node_modules\n(?d)dist\n.git\n.devtool\n.env\n*.swp\n.DS_Store\n', ['npm']), ['(?d).next', '(?d)coverage']);
  assert.deepEqual(missingPatterns(renderStignore(['go']), ['go']), []);
});

test('a .stignore written on Windows (\\r\\n) is read line by line like any other', () => {
  assert.deepEqual(missingPatterns(renderStignore(['go']).replace(/\n/g, '\r\n'), ['go']), []);
});
