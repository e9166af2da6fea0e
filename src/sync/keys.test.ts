import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shortIdLess } from './keys.ts';

// Syncthing's own order: the short ID is the first 64 bits, and base32 puts A (0) before 2 (26),
// unlike ASCII. The laptop must be the smaller end (keys.ts says why).
test('device IDs compare by their short ID, in base32 digit order', () => {
  const id = (head: string) => `${head.padEnd(7, 'A')}-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA`;
  assert.equal(shortIdLess(id('A'), id('B')), true);
  assert.equal(shortIdLess(id('B'), id('A')), false);
  assert.equal(shortIdLess(id('Z'), id('2')), true, 'Z is 25, 2 is 26');
  assert.equal(shortIdLess(id('7'), id('2')), false);
  assert.equal(shortIdLess(id('AB'), id('AC')), true);
  assert.equal(shortIdLess(id('a'), id('B')), true, 'case does not matter');
  assert.equal(shortIdLess(id('A'), id('A')), false, 'equal is not less');
  // The 8th to 13th digits still count (the dash between groups does not); the 14th is past 64 bits.
  assert.equal(shortIdLess('AAAAAAA-AAAAABA-X', 'AAAAAAA-AAAAACA-A'), true);
});

test('digits past the 64 bits of the short ID do not count', () => {
  assert.equal(shortIdLess('AAAAAAA-AAAAAAB-X', 'AAAAAAA-AAAAAAC-A'), false);
});
