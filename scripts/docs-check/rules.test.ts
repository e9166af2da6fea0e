import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkFile, checkSize, ignoredFolderNames, PathIndex } from './rules.ts';

// A small repository: what a cited path may name.
const index = new PathIndex(
  [
    'README.md',
    '.dependency-cruiser.cjs',
    'chart/values.yaml',
    'docs/architecture.md',
    'docs/sync.md',
    'src/dev/up-session.ts',
    'src/kube/client.ts',
    'src/dev/statefulset-claims.ts',
    'test/e2e/dev-sync.e2e.test.ts',
  ],
  ['dist', 'node_modules'],
);

const check = (path: string, text: string) => checkFile(path, text, index).map((f) => `${f.line}: ${f.message}`);

describe('cited paths', () => {
  test('a rooted path must exist; a trailing slash names a folder; `*` and `**/` match', () => {
    const doc = [
      'See docs/sync.md, chart/values.yaml and `src/dev/`.',
      'Also src/dev/statefulset*.ts and test/**/*.e2e.test.ts.',
      'Gone: src/dev/up-several.ts, chart/templates/, src/kube/client.ts/.',
    ].join('\n');
    assert.deepEqual(check('docs/architecture.md', doc), [
      '3: cited path: src/dev/up-several.ts does not exist',
      '3: cited path: chart/templates/ does not exist',
      '3: cited path: src/kube/client.ts/ does not exist',
    ]);
  });

  test("a source file's name must end some path of the repository, whole segments", () => {
    const code = '// up-session.ts and kube/client.ts, .dependency-cruiser.cjs; not up-several.ts, ube/client.ts, build/context.ts\n';
    assert.deepEqual(check('src/dev/up.ts', code), [
      '1: cited path: no file of the repository is up-several.ts',
      '1: cited path: no file of the repository is ube/client.ts',
      '1: cited path: no file of the repository is build/context.ts',
    ]);
  });

  test("not paths: URLs, absolute and home paths, a user's relative paths, placeholders, ignored folders, other file names", () => {
    const doc = [
      'https://example.test/docs/missing.md, /etc/docs/missing.md, ~/.devtool/missing.md, $HOME/missing.ts,',
      'localhost:5000/missing.ts, @scope/missing.ts, ./data, ../other/missing.md, .../missing.ts,',
      'test/e2e/<name>.e2e.test.ts, docs/decisions/NNNN-title.md, path/to/devtool.cjs, dist/devtool.cjs, node_modules/x/y.ts,',
      'contexts.json, compose.yaml, lib/model/model.go, Node.js, .ts files, docs/sync.md.',
    ].join('\n');
    assert.deepEqual(check('docs/architecture.md', doc), []);
  });

  test("Markdown links resolve from the file's folder; URLs and anchors are not checked", () => {
    const doc = '[a](sync.md) [b](sync.md#top) [c](../README.md) [d](#here) [e](https://example.test/x.md)\n[f](missing.md) [g](../docs/)\n';
    assert.deepEqual(check('docs/architecture.md', doc), ['2: link to missing.md: no such file']);
  });

  test('code: only comments are read; the comments of tests are not checked for paths', () => {
    const code = "// see src/gone.ts\nconst file = 'src/missing.ts';\n";
    assert.deepEqual(check('src/a.ts', code), ['1: cited path: src/gone.ts does not exist']);
    assert.deepEqual(check('src/a.test.ts', code), []);
    assert.deepEqual(check('agent/a_test.go', '// src/gone.ts\npackage a\n'), []);
  });
});

describe('citations a reader cannot open', () => {
  test('numbered rulings, issues and findings, in any case, with or without #', () => {
    const code = '/**\n * Ruling 5, issue #12, findings 3 and issues 10.\n */\n';
    assert.deepEqual(check('src/a.ts', code), [
      '2: "Ruling 5" cites a numbered ruling, which a reader cannot open: state the rule',
      '2: "issue #12" cites a numbered issue, which a reader cannot open: state the rule',
      '2: "findings 3" cites a numbered finding, which a reader cannot open: state the rule',
      '2: "issues 10" cites a numbered issue, which a reader cannot open: state the rule',
    ]);
  });

  test('a number that is part of a word is not one: the service issues 10-minute tokens', () => {
    assert.deepEqual(check('src/a.ts', '// The service issues 10-minute tokens.\n'), []);
  });

  test('the requirements documents by that phrase, also across a comment line; an image reference is not one', () => {
    const code = '/**\n * As in the\n * reference; the references, the image reference and a reference are fine.\n */\n';
    assert.deepEqual(check('src/a.ts', code), ['2: "the * reference" cites the requirements documents, which a reader cannot open: state the rule']);
    assert.deepEqual(check('docs/sync.md', "The reference's wait.\n"), [
      '1: "The reference" cites the requirements documents, which a reader cannot open: state the rule',
    ]);
  });

  test('the shared folder outside the clone, in docs and in comments of any language', () => {
    assert.deepEqual(check('cluster/x.sh', 'echo "shared/ in a string"\n# ../shared/notes\n'), [
      '2: "shared/" cites the shared folder outside the repository, which a reader cannot open: state the rule',
    ]);
    assert.deepEqual(check('docs/sync.md', 'the-shared/ folder of a project\n'), []);
  });

  test('strings in code are data, not citations', () => {
    assert.deepEqual(check('src/a.ts', "const s = 'ruling 5, the reference';\n"), []);
  });
});

describe('dated figures in comments', () => {
  test('a date within reach of a measurement', () => {
    const code = ['// Measured on 2026-11-28: 0.30 s instead of 0.47 s.', '// In Nov 2026 the cache held', '// 3.4 MB.'].join('\n');
    assert.deepEqual(
      check('src/a.ts', code).map((f) => f.replace(/".*/, '')),
      ['1: a dated figure (', '2: a dated figure ('],
    );
  });

  test('a date alone, a figure alone, or a figure out of reach of the date is fine', () => {
    const far = `// Tagged 2025-06-20.${' word'.repeat(40)} It waits 10 s.\n`;
    assert.deepEqual(check('src/a.ts', '// Tagged 2025-06-20T09:17:23Z.\n// Waits 10 s.\n'), []);
    assert.deepEqual(check('src/a.ts', far), []);
    assert.deepEqual(check('docs/sync.md', 'Measured 2026-11-28: 0.30 s.\n'), [], 'docs may quote a measurement with its date');
  });
});

describe('doc sizes', () => {
  const KIB = 1024;
  test('the README, decision records and their index, and any other Markdown file', () => {
    assert.deepEqual(checkSize('README.md', 10 * KIB), []);
    assert.match(checkSize('README.md', 10 * KIB + 1)[0]!.message, /10\.0 KiB, over the 10\.0 KiB allowed for the README/);
    assert.equal(checkSize('docs/decisions/0001-one-bundle.md', 8 * KIB + 1).length, 1);
    assert.equal(checkSize('docs/decisions/README.md', 32 * KIB).length, 0);
    assert.equal(checkSize('docs/decisions/README.md', 32 * KIB + 1).length, 1);
    assert.equal(checkSize('agent/README.md', 40 * KIB).length, 0);
    assert.equal(checkSize('docs/sync.md', 40 * KIB + 1).length, 1);
    assert.equal(checkSize('src/a.ts', 100 * KIB).length, 0);
  });
});

test('the folders a .gitignore names plainly, which a fresh clone does not have', () => {
  assert.deepEqual(ignoredFolderNames('node_modules\ndist/\n*.log\n/tmp/\n.devtool/\n# note\n!keep/\nsrc/gen/\n'), ['node_modules', 'dist', 'tmp', '.devtool']);
});
