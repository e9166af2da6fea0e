import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { NOTICE_INTERVAL_MS, newerVersionLine, noticeDue, tellNewerVersions, type VersionNoticeEnv } from './version-notice.ts';

const LINUX = { platform: 'linux', arch: 'x64' };
const URL_A = 'https://devtool.example';
const URL_B = 'https://other.example';
const HOUR = 60 * 60 * 1000;

test('the line names the service, both versions and the install command of this machine', () => {
  assert.equal(
    newerVersionLine(URL_A, '0.3.0', '0.2.1', { platform: 'darwin', arch: 'arm64' }),
    'the devtool service at https://devtool.example runs devtool 0.3.0, this CLI is 0.2.1: install 0.3.0 from its release with ' +
      'npm install -g --offline --no-update-notifier ./devtool-0.3.0.tgz ./devtool-darwin-arm64-0.3.0.tgz',
  );
});

test('no line unless the service runs a newer semantic version, pre-releases by their precedence', () => {
  assert.equal(newerVersionLine(URL_A, '0.2.0', '0.2.0', LINUX), undefined);
  assert.equal(newerVersionLine(URL_A, '0.1.9', '0.2.0', LINUX), undefined);
  assert.equal(newerVersionLine(URL_A, '0.2.0-rc.1', '0.2.0', LINUX), undefined);
  assert.match(newerVersionLine(URL_A, '0.2.0', '0.2.0-rc.1', LINUX) ?? '', /runs devtool 0\.2\.0, this CLI is 0\.2\.0-rc\.1/);
  assert.match(newerVersionLine(URL_A, '0.3.0-rc.1', '0.2.0', LINUX) ?? '', /devtool-0\.3\.0-rc\.1\.tgz/);
  assert.equal(newerVersionLine(URL_A, 'main-abc123', '0.2.0', LINUX), undefined);
  assert.equal(newerVersionLine(URL_A, '0.3.0', 'dev', LINUX), undefined);
});

test('a notice is due when never told, a day after the last one, or when the clock went back', () => {
  const told = new Date('2026-03-01T12:00:00Z');
  assert.equal(noticeDue(undefined, told), true);
  assert.equal(noticeDue(new Date('not a date'), told), true);
  assert.equal(noticeDue(told, new Date(told.getTime() + 23 * HOUR)), false);
  assert.equal(noticeDue(told, new Date(told.getTime() + NOTICE_INTERVAL_MS)), true);
  assert.equal(noticeDue(told, new Date(told.getTime() - HOUR)), true);
});

function env(clock: { now: Date }, stampFile = join(mkdtempSync(join(tmpdir(), 'devtool-notice-')), 'version-notice.json')) {
  const told: string[] = [];
  const e: VersionNoticeEnv = { cliVersion: '0.2.0', now: () => clock.now, stampFile, machine: LINUX, tell: (line) => told.push(line) };
  return { e, told, stampFile };
}

test('told once a day per service URL, the stamp kept in its file', () => {
  const clock = { now: new Date('2026-03-01T12:00:00Z') };
  const { e, told, stampFile } = env(clock);
  const seen = new Map([[URL_A, '0.3.0']]);
  assert.equal(tellNewerVersions(e, seen).length, 1);
  assert.deepEqual(JSON.parse(readFileSync(stampFile, 'utf8')), { [URL_A]: '2026-03-01T12:00:00.000Z' });

  clock.now = new Date('2026-03-02T11:59:59Z');
  assert.deepEqual(tellNewerVersions(e, seen), []);
  // Another service has its own day.
  assert.equal(tellNewerVersions(e, new Map([[URL_B, '0.4.0']])).length, 1);

  clock.now = new Date('2026-03-02T12:00:00Z');
  assert.equal(tellNewerVersions(e, new Map([...seen, [URL_B, '0.4.0']])).length, 1);
  assert.deepEqual(
    told.map((l) => l.split(' runs ')[0]),
    ['the devtool service at https://devtool.example', 'the devtool service at https://other.example', 'the devtool service at https://devtool.example'],
  );
  assert.deepEqual(JSON.parse(readFileSync(stampFile, 'utf8')), { [URL_A]: '2026-03-02T12:00:00.000Z', [URL_B]: '2026-03-02T11:59:59.000Z' });
});

test('a service that is not newer neither tells nor stamps', () => {
  const clock = { now: new Date('2026-03-01T12:00:00Z') };
  const { e, told, stampFile } = env(clock);
  assert.deepEqual(tellNewerVersions(e, new Map([[URL_A, '0.2.0']])), []);
  assert.deepEqual(told, []);
  assert.throws(() => readFileSync(stampFile), { code: 'ENOENT' });
});

test('a stamp file that is not ours counts as never told; one that cannot be written still tells', () => {
  const clock = { now: new Date('2026-03-01T12:00:00Z') };
  const dir = mkdtempSync(join(tmpdir(), 'devtool-notice-'));
  const garbled = join(dir, 'garbled.json');
  writeFileSync(garbled, '[1, 2');
  assert.equal(tellNewerVersions(env(clock, garbled).e, new Map([[URL_A, '0.3.0']])).length, 1);
  assert.deepEqual(JSON.parse(readFileSync(garbled, 'utf8')), { [URL_A]: '2026-03-01T12:00:00.000Z' });

  const folder = join(dir, 'a-folder');
  mkdirSync(folder);
  const { e, told } = env(clock, folder);
  assert.equal(tellNewerVersions(e, new Map([[URL_A, '0.3.0']])).length, 1);
  assert.equal(told.length, 1);
});
