import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localAgentConfig, remoteSyncthing, syncFolderPairs } from './syncthing-config.ts';
import type { SyncKeys } from './keys.ts';
import { describeFolder } from '../dev/up-sync.ts';

const identity = (name: string) => ({ certificate: `${name}-cert`, key: `${name}-key`, deviceID: `${name}-ID`, apiKey: `${name}-k`, password: `${name}-p` });
const keys: SyncKeys = { local: identity('local'), remote: identity('remote') };

const folders = syncFolderPairs('api', '/p', [
  { local: './src', remote: '/app/src', mode: 'two-way' },
  { local: '/p/config', remote: '/etc/app', mode: 'send-only' },
]);

type Folders = { syncthing?: { folders: { path: string; type: string }[] }; folders?: { path: string; type: string }[] };

test('a send-only folder is receive-only in the container, so its changes there never come back', () => {
  const remote = remoteSyncthing(keys, folders) as Folders;
  assert.deepEqual(
    remote.folders!.map((f) => [f.path, f.type]),
    [
      ['/app/src', 'sendreceive'],
      ['/etc/app', 'receiveonly'],
    ],
  );
});

test('every local folder starts send-only, whatever its mode', () => {
  const local = localAgentConfig(keys, folders, 3) as Folders;
  assert.deepEqual(
    local.syncthing!.folders.map((f) => [f.path, f.type]),
    [
      ['/p/src', 'sendonly'],
      ['/p/config', 'sendonly'],
    ],
  );
});

test('both ends keep every conflict copy, and rescan as a safety net only', () => {
  type Folder = { maxConflicts: number; rescanIntervalS: number; fsWatcherDelayS: number };
  const remote = remoteSyncthing(keys, folders) as { folders: Folder[] };
  const local = localAgentConfig(keys, folders, 3) as { syncthing: { folders: Folder[] } };
  for (const f of [...remote.folders, ...local.syncthing.folders]) {
    assert.deepEqual([f.maxConflicts, f.rescanIntervalS, f.fsWatcherDelayS], [-1, 3600, 10]);
  }
});

test("Syncthing's checks for a case-insensitive file system: off in the container, off here only where known case-sensitive", () => {
  type Folder = { caseSensitiveFS: boolean };
  const remote = remoteSyncthing(keys, folders) as { folders: Folder[] };
  assert.deepEqual(
    remote.folders.map((f) => f.caseSensitiveFS),
    [true, true],
  );
  const known = [{ ...folders[0]!, localCaseSensitive: true }, folders[1]!];
  const local = localAgentConfig(keys, known, 3) as { syncthing: { folders: Folder[] } };
  assert.deepEqual(
    local.syncthing.folders.map((f) => f.caseSensitiveFS),
    [true, false],
  );
});

test('what up says of each folder', () => {
  assert.deepEqual(
    folders.map((x) => describeFolder(x, '/p')),
    ['./src <-> /app/src (both ways)', './config -> /etc/app (sent only)'],
  );
});

test("the container's folders ignore permission bits, the laptop's keep them; a trusted container's keep them too", () => {
  const remote = remoteSyncthing(keys, folders) as { folders: { id: string; ignorePerms?: boolean }[] };
  assert.deepEqual(
    remote.folders.map((f) => f.ignorePerms),
    [true, true],
  );
  const local = localAgentConfig(keys, folders, 3) as { syncthing: { folders: { ignorePerms?: boolean }[] } };
  for (const f of local.syncthing.folders) assert.notEqual(f.ignorePerms, true, 'the laptop decides the bits: it must keep them');
  const trusted = remoteSyncthing(keys, syncFolderPairs('api', '/p', [{ local: '.', remote: '/app', mode: 'two-way' }], true)) as {
    folders: { ignorePerms?: boolean }[];
  };
  assert.equal(trusted.folders[0]!.ignorePerms, false);
});
