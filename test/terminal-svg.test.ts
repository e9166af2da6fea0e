import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionLines, terminalSvg } from '../scripts/terminal-svg.ts';

test('a session: each command after a prompt, then its output without colour codes', () => {
  assert.deepEqual(sessionLines([{ command: 'devtool version', output: '\u001b[1mdevtool version 0.1.0\u001b[0m\n' }]), [
    { text: '$ devtool version', typed: true },
    { text: 'devtool version 0.1.0', typed: false },
  ]);
  assert.deepEqual(sessionLines([{ command: 'true', output: '' }]), [{ text: '$ true', typed: true }]);
});

test('the picture: text escaped, long lines cut, the window as wide as the longest line', () => {
  const svg = terminalSvg('a <title>', [{ command: 'echo', output: `a & b\n${'x'.repeat(200)}\n` }]);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="886" height="110"/);
  assert.match(svg, /<title>a &lt;title&gt;<\/title>/);
  assert.match(svg, />a &amp; b<\/text>/);
  assert.match(svg, new RegExp(`>${'x'.repeat(109)}…</text>`));
});
