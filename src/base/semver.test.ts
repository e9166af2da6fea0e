import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNewerVersion } from './semver.ts';

test('isNewerVersion: only a higher version that both sides can read', () => {
  assert.equal(isNewerVersion('0.2.0', '0.1.0'), true);
  assert.equal(isNewerVersion('0.10.0', '0.9.0'), true, 'numbers compare as numbers');
  assert.equal(isNewerVersion('v0.2.0', '0.1.0'), true, 'a leading v');
  assert.equal(isNewerVersion(' 0.2.0\n', '0.1.0'), true, 'a header value with spaces around it');
  assert.equal(isNewerVersion('0.2.0-rc.1', '0.1.0'), true);
  assert.equal(isNewerVersion('0.2.0-rc.1', '0.2.0'), false, 'a release ranks above its pre-releases');
  assert.equal(isNewerVersion('0.2.0', '0.2.0-rc.1'), true);
  assert.equal(isNewerVersion('1.0.0-rc.10', '1.0.0-rc.9'), true);
  assert.equal(isNewerVersion('0.1.0', '0.1.0'), false);
  assert.equal(isNewerVersion('0.1.0', '0.2.0'), false);
  assert.equal(isNewerVersion('1.0.0+later', '1.0.0'), false, 'build metadata does not count');
});

test('isNewerVersion: false when either side is not a semantic version', () => {
  for (const bad of ['', '1', '1.2', '1.2.3.4', '01.2.3', '1.2.3-01', 'dev', 'latest', '9.9.9; rm -rf /', '2.0.0\u001b[31m']) {
    assert.equal(isNewerVersion(bad, '0.1.0'), false, JSON.stringify(bad));
    assert.equal(isNewerVersion('99.0.0', bad), false, JSON.stringify(bad));
  }
});
