import assert from 'node:assert/strict';
import { test } from 'node:test';
import { colourWanted, COLOUR, PLAIN, SERIES, seriesFor, styleFor } from './style.ts';

test('colour only on a terminal, and never with NO_COLOR set (to anything but empty) or TERM=dumb', () => {
  const tty = { isTTY: true };
  assert.equal(colourWanted(tty, { TERM: 'xterm-256color' }), true);
  assert.equal(colourWanted(tty, {}), true);
  assert.equal(colourWanted(tty, { NO_COLOR: '' }), true, 'an empty NO_COLOR is unset (no-color.org)');
  assert.equal(colourWanted(tty, { NO_COLOR: '1' }), false);
  assert.equal(colourWanted(tty, { NO_COLOR: '0' }), false, 'any value turns it off');
  assert.equal(colourWanted(tty, { TERM: 'dumb' }), false);
  assert.equal(colourWanted({ isTTY: false }, {}), false);
  assert.equal(colourWanted({}, {}), false);
  assert.equal(styleFor(tty, {}), COLOUR);
  assert.equal(styleFor({}, {}), PLAIN);
  assert.equal(COLOUR.error('Error:'), '\u001b[31mError:\u001b[39m');
  assert.equal(PLAIN.error('Error:'), 'Error:');
});

test('series colours: distinct hues on a terminal, one plain paint where colour is off', () => {
  const tty = seriesFor({ isTTY: true }, {});
  assert.equal(tty, SERIES);
  assert.equal(new Set(tty.map((paint) => paint('x'))).size, tty.length);
  assert.ok(!tty.some((paint) => paint('x').includes('[31m')), 'red is kept for failures');
  assert.equal(tty[0]!('web'), '\u001b[36mweb\u001b[39m');
  for (const off of [seriesFor({ isTTY: false }, {}), seriesFor({ isTTY: true }, { NO_COLOR: '1' })])
    assert.deepEqual(
      off.map((paint) => paint('web')),
      ['web'],
    );
});
