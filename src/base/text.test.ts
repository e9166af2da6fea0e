import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oneLine } from './text.ts';

test('oneLine joins lines with one space and trims the ends', () => {
  assert.equal(
    oneLine('  failed to solve:\n   process "/bin/sh" did not complete\r\n\texit code: 1 \n'),
    'failed to solve: process "/bin/sh" did not complete exit code: 1',
  );
  assert.equal(oneLine('already one line'), 'already one line');
  // A lone carriage return (an old Mac's line end, a progress bar's redraw) breaks a line too.
  assert.equal(oneLine('denied\r by policy\n\n  in namespace a'), 'denied by policy in namespace a');
  assert.equal(oneLine('keeps  inner  blanks'), 'keeps  inner  blanks');
  assert.equal(oneLine('\n\n'), '');
});
