import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareSemVer, isNewerVersion, parseSemVer } from './semver.ts';

test('parses a release, a pre-release and build metadata, and a leading v', () => {
  assert.deepEqual(parseSemVer('1.2.3'), { major: 1, minor: 2, patch: 3, prerelease: [] });
  assert.deepEqual(parseSemVer('v0.10.0-rc.1+build.7'), { major: 0, minor: 10, patch: 0, prerelease: ['rc', '1'] });
  assert.deepEqual(parseSemVer('2.0.0-alpha-1'), { major: 2, minor: 0, patch: 0, prerelease: ['alpha-1'] });
});

test('refuses what is not a semantic version', () => {
  for (const bad of ['', '1', '1.2', '1.2.3.4', '01.2.3', '1.02.3', '1.2.3-', '1.2.3-01', '1.2.3-rc..1', 'dev', '1.2.3+', 'latest']) {
    assert.equal(parseSemVer(bad), undefined, bad);
  }
});

test("orders versions as semver.org's example does", () => {
  // semver.org, item 11: each one ranks below the next.
  const ordered = [
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '1.0.1',
    '1.1.0',
    '2.0.0',
  ];
  for (let i = 0; i < ordered.length; i++) {
    for (let j = 0; j < ordered.length; j++) {
      const order = Math.sign(compareSemVer(parseSemVer(ordered[i]!)!, parseSemVer(ordered[j]!)!));
      assert.equal(order, Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
    }
  }
});

test('numbers compare as numbers, not as text', () => {
  assert.ok(compareSemVer(parseSemVer('0.10.0')!, parseSemVer('0.9.0')!) > 0);
  assert.ok(compareSemVer(parseSemVer('1.0.0-rc.10')!, parseSemVer('1.0.0-rc.9')!) > 0);
});

test('build metadata does not count', () => {
  assert.equal(compareSemVer(parseSemVer('1.0.0+a')!, parseSemVer('1.0.0+b')!), 0);
  assert.equal(isNewerVersion('1.0.0+later', '1.0.0'), false);
});

test('isNewerVersion: only a higher version that both sides can read', () => {
  assert.equal(isNewerVersion('0.2.0', '0.1.0'), true);
  assert.equal(isNewerVersion('0.2.0-rc.1', '0.1.0'), true);
  assert.equal(isNewerVersion('0.2.0-rc.1', '0.2.0'), false);
  assert.equal(isNewerVersion('0.2.0', '0.2.0-rc.1'), true);
  assert.equal(isNewerVersion('0.1.0', '0.1.0'), false);
  assert.equal(isNewerVersion('0.1.0', '0.2.0'), false);
  assert.equal(isNewerVersion('garbage', '0.1.0'), false);
  assert.equal(isNewerVersion('0.2.0', 'dev'), false);
});
