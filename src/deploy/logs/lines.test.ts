import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLater, LineSplitter, linePrefix, parseTail, ServiceColours, sinceSeconds, timedLine } from './lines.ts';

test('chunks become whole lines: a line cut across chunks waits, CRLF loses its CR, the last line without a newline comes at the end', () => {
  const s = new LineSplitter();
  assert.deepEqual(s.push(Buffer.from('one\ntw')), ['one']);
  assert.deepEqual(s.push(Buffer.from('o\r\nthree\n\nfo')), ['two', 'three', '']);
  assert.deepEqual(s.push(Buffer.from('ur')), []);
  assert.deepEqual(s.end(), ['four']);
  assert.deepEqual(s.end(), []);
});

test('a character of several bytes cut between chunks is whole in its line', () => {
  const s = new LineSplitter();
  const bytes = Buffer.from('héllo ✓\n');
  const lines = [...bytes].flatMap((_, i) => s.push(bytes.subarray(i, i + 1)));
  assert.deepEqual(lines, ['héllo ✓']);
});

test('the prefix names service and pod, and the container in a pod of several', () => {
  assert.equal(linePrefix({ service: 'web', pod: 'web-5d9c7-x2k4p', container: 'main', several: false }), '[web/web-5d9c7-x2k4p]');
  assert.equal(linePrefix({ service: 'web', pod: 'web-5d9c7-x2k4p', container: 'proxy', several: true }), '[web/web-5d9c7-x2k4p/proxy]');
});

test('one colour per service, in the order services appear, round the palette', () => {
  const palette = ['a', 'b'].map((c) => (text: string) => `${c}:${text}`);
  const colours = new ServiceColours(palette);
  assert.deepEqual(
    ['web', 'api', 'web', 'db'].map((s) => colours.of(s)('x')),
    ['a:x', 'b:x', 'a:x', 'a:x'],
  );
});

test('--tail: a number of lines from 0; anything else names the flag', () => {
  assert.equal(parseTail(undefined), undefined);
  assert.equal(parseTail('0'), 0);
  assert.equal(parseTail('100'), 100);
  for (const bad of ['-1', 'ten', '1.5', '', '1e3']) {
    assert.throws(() => parseTail(bad), { name: 'UsageError', message: `invalid value "${bad}" for flag --tail: expected a number of lines, 0 or more` });
  }
});

test('--since in whole seconds: a part of one counts as one, 0 means from the start', () => {
  assert.equal(sinceSeconds(undefined), undefined);
  assert.equal(sinceSeconds(0), undefined);
  assert.equal(sinceSeconds(600_000), 600);
  assert.equal(sinceSeconds(1500), 2);
  assert.equal(sinceSeconds(1), 1);
});

test('a timestamped line: its time and its text; times compared to the nanosecond whatever their length', () => {
  assert.deepEqual(timedLine('2026-12-02T10:50:59.9117Z hi there'), { time: '2026-12-02T10:50:59.9117Z', text: 'hi there' });
  assert.deepEqual(timedLine('2026-12-02T10:50:59Z '), { time: '2026-12-02T10:50:59Z', text: '' });
  assert.deepEqual(timedLine('2026-12-02T10:50:59Z'), { time: '2026-12-02T10:50:59Z', text: '' });
  assert.deepEqual(timedLine('no time here'), { text: 'no time here' });
  assert.deepEqual(timedLine('2026-12-02 10:50:59 not the API server'), { text: '2026-12-02 10:50:59 not the API server' });
  assert.equal(isLater('2026-12-02T10:50:59.91Z', '2026-12-02T10:50:59.900000001Z'), true);
  assert.equal(isLater('2026-12-02T10:50:59.9Z', '2026-12-02T10:50:59.900000000Z'), false);
  assert.equal(isLater('2026-12-02T10:51:00Z', '2026-12-02T10:50:59.999999999Z'), true);
  assert.equal(isLater('2026-12-02T10:50:59Z', '2026-12-02T10:50:59Z'), false);
});
