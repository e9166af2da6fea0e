import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { localAgentConfig, remoteSyncthing } from './syncthing-config.ts';
import { generateSyncKeys, parseSyncKeys, shortIdLess, type SyncKeys } from './keys.ts';

const identity = (n: string) => ({ certificate: `CERT-${n}`, key: `KEY-${n}`, deviceID: `DEV-${n}` });
const folders = [{ id: 'f1', local: '/home/ann/shop', remote: '/app', mode: 'two-way' as const }];

/** A stand-in for `devtool-host devtool-agent keygen`: a new identity, API key and password per call (other arguments: exit 2). */
function fakeAgent(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'keygen-')), 'devtool-agent');
  const script = `if (process.argv.slice(2).join(' ') !== 'devtool-agent keygen') process.exit(2);
const r = () => require('node:crypto').randomBytes(16).toString('hex');
process.stdout.write(JSON.stringify({ syncthing: { certificate: 'C' + r(), key: 'K' + r(), deviceID: 'D' + r() }, apiKey: r(), guiPassword: r() }));`;
  writeFileSync(path, `#!${process.execPath}\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

test('each end gets its own API key and password, and each contract carries only its own', async () => {
  const keys = await generateSyncKeys({ file: fakeAgent(), args: ['devtool-agent'] });
  assert.notEqual(keys.local.apiKey, keys.remote.apiKey);
  assert.notEqual(keys.local.password, keys.remote.password);
  const remote = remoteSyncthing(keys, folders);
  assert.equal(remote.apiKey, keys.remote.apiKey);
  assert.equal(remote.guiPassword, keys.remote.password);
  const local = localAgentConfig(keys, folders, 40000).syncthing as Record<string, unknown>;
  assert.equal(local.apiKey, keys.local.apiKey);
  assert.equal(local.guiPassword, keys.local.password);
  // What goes to the container holds nothing of the laptop's end but its device ID.
  const sent = JSON.stringify(remote);
  for (const secret of [keys.local.apiKey, keys.local.password, keys.local.key]) assert.ok(!sent.includes(secret));
  // Stored and read back unchanged.
  assert.deepEqual(parseSyncKeys(JSON.stringify(keys)), keys);
});

test('a sync-keys.json from before (one shared API key and password) loads as both ends sharing them', () => {
  const old = { local: identity('l'), remote: identity('r'), apiKey: 'shared-key', password: 'shared-pw' };
  const keys: SyncKeys = parseSyncKeys(JSON.stringify(old));
  assert.deepEqual(keys.local, { ...identity('l'), apiKey: 'shared-key', password: 'shared-pw' });
  assert.deepEqual(keys.remote, { ...identity('r'), apiKey: 'shared-key', password: 'shared-pw' });
  // The container configured from the old file keeps the key and password it was given.
  assert.equal(remoteSyncthing(keys, folders).apiKey, 'shared-key');
});

test('a sync-keys.json missing a field is refused (the caller makes new keys)', () => {
  assert.throws(() => parseSyncKeys(JSON.stringify({ local: identity('l'), remote: identity('r') })), /local\.apiKey is missing/);
  assert.throws(() => parseSyncKeys('{'), SyntaxError);
});

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
