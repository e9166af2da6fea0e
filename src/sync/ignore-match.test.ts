import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { globToRegex, leaveOutMatcher } from './ignore-match.ts';
import { plainIgnoreNames, readIgnoreLines } from './watcher.ts';

/** Written by Syncthing's own matcher: testdata/stignore-golden/main.go. */
const golden = JSON.parse(readFileSync(new URL('./testdata/stignore-cases.json', import.meta.url), 'utf8')) as {
  lines: string[];
  ignored: Record<string, boolean>;
}[];

function matcherFor(lines: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'ignore-match-'));
  try {
    writeFileSync(join(dir, '.stignore'), lines.join('\n'));
    const m = leaveOutMatcher(dir);
    assert.ok(m, `ignore file not understood: ${lines.join(' | ')}`);
    return m;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('every path Syncthing ignores is left out of the bootstrap (golden cases from lib/ignore)', () => {
  for (const c of golden) {
    const leaveOut = matcherFor(c.lines);
    for (const [path, ignored] of Object.entries(c.ignored)) {
      if (ignored) assert.ok(leaveOut(path), `${path} is ignored by Syncthing with ${JSON.stringify(c.lines)} but would be sent`);
    }
  }
});

test('without negations or (?i), the matcher agrees with Syncthing exactly (it leaves out no more than needed)', () => {
  let compared = 0;
  for (const c of golden.filter((g) => g.lines.every((l) => !l.includes('!') && !l.includes('(?i)')))) {
    const leaveOut = matcherFor(c.lines);
    for (const [path, ignored] of Object.entries(c.ignored)) {
      assert.equal(leaveOut(path), ignored, `${path} with ${JSON.stringify(c.lines)}`);
      compared++;
    }
  }
  assert.ok(compared > 300, `only ${compared} comparisons`);
});

test("Syncthing's own files are always left out; no .stignore leaves out nothing else", () => {
  const dir = mkdtempSync(join(tmpdir(), 'ignore-match-'));
  try {
    const m = leaveOutMatcher(dir)!;
    for (const p of ['.stfolder', '.stignore', '.stversions/a', 'sub/.syncthing.x.tmp', '~syncthing~y.tmp']) assert.ok(m(p), p);
    for (const p of ['sub/.stfolder', 'src/a.ts', '.syncthing.x']) assert.equal(m(p), false, p);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('#include files are read relative to the includer; one that is missing or outside turns the bootstrap off', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ignore-match-'));
  try {
    mkdirSync(join(dir, 'conf'));
    writeFileSync(join(dir, 'conf', 'more'), 'secrets\n');
    writeFileSync(join(dir, '.stignore'), '#include conf/more\n');
    assert.ok(leaveOutMatcher(dir)!('a/secrets/key'));
    writeFileSync(join(dir, '.stignore'), '#include conf/missing\n');
    assert.equal(leaveOutMatcher(dir), undefined);
    writeFileSync(join(dir, '.stignore'), '#include ../elsewhere\n');
    assert.equal(leaveOutMatcher(dir), undefined);
    writeFileSync(join(dir, '.stignore'), 'bad[glob\n');
    assert.equal(leaveOutMatcher(dir), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('globs: * and ? stay within a name, ** crosses names, classes, braces and escapes', () => {
  const re = (g: string) => new RegExp(`^${globToRegex(g)}$`);
  assert.ok(re('*.js').test('a.js') && !re('*.js').test('a/b.js'));
  assert.ok(re('a**z').test('a/b/z'));
  assert.ok(re('?.md').test('a.md') && !re('?.md').test('/.md'));
  assert.ok(re('[a-c]x').test('bx') && !re('[a-c]x').test('dx'));
  assert.ok(re('[!a-c]x').test('dx') && !re('[!a-c]x').test('ax'));
  assert.ok(re('{foo,b*}.json').test('bar.json') && !re('{foo,b*}.json').test('x.json'));
  assert.ok(re('file\\*').test('file*') && !re('file\\*').test('files'));
  assert.ok(re('a.b').test('a.b') && !re('a.b').test('axb'));
});

test('an oversized or unreadable .stignore turns the bootstrap off and is an error for the container end', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'stignore-cap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, '.stignore'), `${'node_modules\n'.repeat(100_000)}`);
  assert.equal(leaveOutMatcher(dir), undefined);
  assert.throws(() => readIgnoreLines(dir), /\.stignore is 1\.2 MiB: a \.stignore file may be at most 1 MiB/);
  rmSync(join(dir, '.stignore'));
  mkdirSync(join(dir, '.stignore'));
  assert.equal(leaveOutMatcher(dir), undefined, 'there but not a readable file: not "no patterns"');
  assert.throws(() => readIgnoreLines(dir), /cannot read/);
});

test('a .stignore with Windows line endings (\\r\\n) means what it means with \\n, to the bootstrap, the container and the watcher', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ignore-crlf-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, '.stignore'), '// secrets\r\n.env\r\n(?d)node_modules\r\n/build/\r\n');
  const m = leaveOutMatcher(dir)!;
  assert.deepEqual(
    ['.env', 'node_modules/x', 'build/a', 'src/.env', 'src/a.ts'].map((p) => m(p)),
    [true, true, true, true, false],
  );
  assert.deepEqual(readIgnoreLines(dir), ['// secrets', '.env', '(?d)node_modules', '/build/']);
  assert.deepEqual([...plainIgnoreNames('.env\r\n(?d)node_modules\r\n/build/\r\n')], ['.env', 'node_modules', '/build']);
});
