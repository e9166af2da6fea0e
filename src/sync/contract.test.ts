import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localContract, remoteSyncthing, type SyncFolderPair } from './contract.ts';
import type { SyncKeys } from './keys.ts';

const identity = (name: string) => ({ certificate: `${name}-cert`, key: `${name}-key`, deviceID: `${name}-id` });
const keys: SyncKeys = { local: identity('local'), remote: identity('remote'), apiKey: 'k', password: 'p' };
const folders: SyncFolderPair[] = [
  { id: 'devtool-api-1', local: '/home/me/api', remote: '/app' },
  { id: 'devtool-api-2', local: '/home/me/api/lib', remote: '/lib' },
];

test("the container's folders ignore permission bits, the laptop's keep them", () => {
  const remote = remoteSyncthing(keys, folders) as { folders: { id: string; ignorePerms?: boolean }[] };
  assert.deepEqual(
    remote.folders.map((f) => [f.id, f.ignorePerms]),
    [['devtool-api-1', true], ['devtool-api-2', true]],
  );
  const local = localContract(keys, folders, { gui: 1, listen: 2, peer: 3 }) as { syncthing: { folders: { ignorePerms?: boolean }[] } };
  for (const f of local.syncthing.folders) assert.notEqual(f.ignorePerms, true, 'the laptop decides the bits: it must keep them');
});
