/** The logs and pipeline run pages rendered from given data: golden HTML, line parsing, order and escaping. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertGolden } from '../../test/golden.ts';
import type { RunRecord } from '../store/store.ts';
import { interleave, KEEP_LINES, logArea, logLinesHtml, timedLogLine } from './log-lines.ts';
import { logsPage } from './logs-page.ts';
import { duration, outputLines, runPage, runsSection } from './pipeline-page.ts';

const golden = (name: string) => fileURLToPath(new URL(`testdata/${name}`, import.meta.url));
const NOW = new Date('2026-12-02T12:00:00Z');

const running: RunRecord = {
  name: 'shop',
  namespace: 'team',
  status: 'progressing',
  action: 'deploy',
  repository: 'https://git.example.com/shop.git',
  branch: 'feature/<x>',
  job: 'devtool-run-shop-abc',
  runId: 'abc',
  startedAt: '2026-12-02T11:59:30Z',
};
const failed: RunRecord = {
  ...running,
  status: 'error',
  message: 'the runner failed: exit 1',
  clonedBranch: 'feature/<x>',
  commit: 'fedcba9876543210',
  finishedAt: '2026-12-02T12:01:10Z',
  log: 'cloning\nbuilding <web>\nexit 1\n',
};

describe('log lines', () => {
  test('a timestamped line: its time and text; a line without a time keeps it all', () => {
    assert.deepEqual(timedLogLine('web-1/main', '2026-12-02T14:05:00.123456789Z hello world'), {
      source: 'web-1/main',
      at: Date.parse('2026-12-02T14:05:00.123Z'),
      text: 'hello world',
    });
    assert.deepEqual(timedLogLine('p/c', '2026-12-02T14:05:00Z '), { source: 'p/c', at: Date.parse('2026-12-02T14:05:00Z'), text: '' });
    const plain = timedLogLine('p/c', 'no time here');
    assert.equal(plain.text, 'no time here');
    assert.ok(Number.isNaN(plain.at));
  });

  test('lines of several containers in time order; lines of one time keep their order', () => {
    const lines = [
      timedLogLine('a/m', '2026-12-02T14:00:02Z a2'),
      timedLogLine('a/m', '2026-12-02T14:00:03Z a3'),
      timedLogLine('b/m', '2026-12-02T14:00:01Z b1'),
      timedLogLine('b/m', '2026-12-02T14:00:03Z b3'),
    ];
    assert.deepEqual(
      interleave(lines).map((l) => l.text),
      ['b1', 'a2', 'a3', 'b3'],
    );
  });

  test('each line its own element, source first, every value escaped; the area keeps the latest lines', () => {
    assert.equal(
      logLinesHtml([timedLogLine('web-1/main', '2026-12-02T14:00:00Z <script>alert(1)</script> & done'), { source: '', at: Number.NaN, text: 'plain' }]).text,
      '<span class="line"><span class="src">web-1/main</span> &lt;script&gt;alert(1)&lt;/script&gt; &amp; done\n</span><span class="line">plain\n</span>',
    );
    const many = Array.from({ length: KEEP_LINES + 5 }, (_, i) => ({ source: '', at: i, text: `l${i}` }));
    const area = logArea('log', 'Logs', many, 'none').text;
    assert.equal(area.match(/class="line"/g)?.length, KEEP_LINES);
    assert.doesNotMatch(area, />l4\n/);
    assert.match(area, />l5\n/);
    assert.equal(
      logArea('log', 'Logs', [], 'No log lines yet.').text,
      `<pre class="log" id="log" tabindex="0" aria-label="Logs" data-keep="${KEEP_LINES}"><span class="muted">No log lines yet.</span></pre>`,
    );
  });
});

describe('the logs page', () => {
  test("a Deployment's pods and lines, interleaved, the stream's path, the live status", () => {
    const p = logsPage({
      user: 'ann',
      admin: false,
      csrf: 'c1',
      namespace: 'team',
      kind: 'deployments',
      name: 'web',
      pods: ['web-1', 'web-2'],
      tail: 200,
      lines: [timedLogLine('web-2/main', '2026-12-02T14:00:02Z second'), timedLogLine('web-1/main', '2026-12-02T14:00:01Z first')],
      script: '/assets/live-x.js',
    });
    assertGolden(golden('logs-page.html'), p);
    assert.match(p, /<div data-live="\/namespaces\/team\/logs\/deployments\/web\/events">/);
    assert.match(p, /web-1\/main<\/span> first\n<\/span><span class="line"><span class="src">web-2\/main<\/span> second/);
  });

  test('a StatefulSet without pods says so', () => {
    const p = logsPage({ user: 'ann', admin: false, namespace: 'team', kind: 'statefulsets', name: 'db', pods: [], tail: 200, lines: [], script: '/s.js' });
    assert.match(p, /StatefulSet <b>db<\/b> in namespace <a href="\/namespaces\/team">team<\/a> · pods: none running/);
    assert.match(p, /<span class="muted">No log lines yet\.<\/span><\/pre>/);
  });

  test("an admin's logs and run pages list Admin, as every page does for an admin", () => {
    const logs = logsPage({ user: 'root', admin: true, namespace: 'team', kind: 'statefulsets', name: 'db', pods: [], tail: 200, lines: [], script: '/s.js' });
    const run = runPage({ user: 'root', admin: true, namespace: 'team', record: failed, output: '', now: NOW, script: '/s.js' });
    for (const p of [logs, run]) assert.match(p, /<li><a href="\/device">Device code<\/a><\/li><li><a href="\/admin">Admin<\/a><\/li>/);
  });
});

describe('pipeline runs', () => {
  test('the namespace section: name, status, branch, commit, started, duration; none says so', () => {
    const s = runsSection('team', [failed, { ...running, name: 'api', branch: undefined as unknown as string }], NOW).text;
    assertGolden(golden('runs-section.html'), s);
    assert.match(s, /<tr data-run="api">.*<tr data-run="shop">/s, 'by name');
    assert.match(s, /<td data-label="Duration">30 s<\/td>/, 'a running run: so far');
    assert.equal(runsSection('team', [], NOW).text, '<p class="muted">No pipeline has run here.</p>');
  });

  test('durations', () => {
    assert.equal(duration({ startedAt: '2026-12-02T12:00:00Z', finishedAt: '2026-12-02T12:00:09Z' }, NOW), '9 s');
    assert.equal(duration({ startedAt: '2026-12-02T11:00:00Z', finishedAt: '2026-12-02T12:01:01Z' }, NOW), '61 min 1 s');
    assert.equal(duration({ startedAt: 'garbage' }, NOW), '');
  });

  test('a running run: live, its output so far, the script', () => {
    const p = runPage({ user: 'ann', admin: false, namespace: 'team', record: running, output: 'cloning\nbuilding\n', now: NOW, script: '/assets/live-x.js' });
    assertGolden(golden('run-running.html'), p);
    assert.match(p, /<div data-live="\/namespaces\/team\/pipelines\/shop\/events">/);
    assert.match(p, /<dd data-status><span data-running>progressing<\/span><\/dd>/);
  });

  test('an ended run: its recorded log, its error, no script, no stream', () => {
    const p = runPage({ user: 'ann', admin: false, namespace: 'team', record: failed, output: failed.log!, now: NOW, script: '/assets/live-x.js' });
    assertGolden(golden('run-ended.html'), p);
    assert.doesNotMatch(p, /<script|data-live/);
    assert.match(p, /<span class="bad">error<\/span>: the runner failed: exit 1/);
    assert.match(p, /<span class="line">building &lt;web&gt;\n<\/span>/);
    assert.deepEqual(outputLines(''), []);
    assert.deepEqual(
      outputLines('a\n\nb').map((l) => l.text),
      ['a', '', 'b'],
    );
  });
});
