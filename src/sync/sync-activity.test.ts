import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SyncActivityView } from './sync-activity.ts';

const REMOTE = 'REMOTE-DEVICE';
const view = () =>
  new SyncActivityView(
    [
      { id: 'web-src', label: './src', sendOnly: false },
      { id: 'web-config', label: './config', sendOnly: true },
    ],
    REMOTE,
  );
const ev = (type: string, data: Record<string, unknown>) => ({ type, data });

test('watching until something is to be received or sent; the counts summed over the folders', () => {
  const v = view();
  assert.deepEqual(v.activity(), { state: 'watching' });
  assert.equal(v.apply(ev('FolderSummary', { folder: 'web-src', summary: { state: 'idle', needTotalItems: 3 } })), true);
  assert.deepEqual(v.activity(), { state: 'syncing', toReceive: 3, toSend: 0 });
  assert.equal(v.apply(ev('FolderCompletion', { folder: 'web-config', device: REMOTE, needItems: 2, needDeletes: 1 })), true);
  assert.deepEqual(v.activity(), { state: 'syncing', toReceive: 3, toSend: 3 });
  // Another device's completion, or an unknown folder, changes nothing.
  assert.equal(v.apply(ev('FolderCompletion', { folder: 'web-src', device: 'OTHER', needItems: 9 })), false);
  assert.equal(v.apply(ev('FolderSummary', { folder: 'elsewhere', summary: { needTotalItems: 9 } })), false);
  v.apply(ev('FolderSummary', { folder: 'web-src', summary: { state: 'idle', needTotalItems: 0 } }));
  v.apply(ev('FolderCompletion', { folder: 'web-config', device: REMOTE, needItems: 0, needDeletes: 0 }));
  assert.deepEqual(v.activity(), { state: 'watching' });
});

test('a send-only folder counts nothing to receive', () => {
  const v = view();
  assert.equal(v.apply(ev('FolderSummary', { folder: 'web-config', summary: { state: 'idle', needTotalItems: 4 } })), false);
  assert.deepEqual(v.activity(), { state: 'watching' });
});

test('a folder moving files is syncing, a scan alone is not', () => {
  const v = view();
  assert.equal(v.apply(ev('StateChanged', { folder: 'web-src', from: 'idle', to: 'scanning' })), false);
  assert.equal(v.apply(ev('StateChanged', { folder: 'web-src', from: 'scanning', to: 'syncing' })), true);
  assert.deepEqual(v.activity(), { state: 'syncing', toReceive: 0, toSend: 0 });
  v.apply(ev('StateChanged', { folder: 'web-src', from: 'syncing', to: 'idle' }));
  assert.deepEqual(v.activity(), { state: 'watching' });
});

test('errors: a stopped folder or items not pulled, in one line naming the folder, until they clear', () => {
  const v = view();
  v.apply(ev('StateChanged', { folder: 'web-src', from: 'idle', to: 'error', error: 'folder marker missing\n(this indicates...)' }));
  assert.deepEqual(v.activity(), { state: 'error', error: './src: folder marker missing (this indicates...)' });
  v.apply(ev('StateChanged', { folder: 'web-src', from: 'error', to: 'idle' }));
  assert.deepEqual(v.activity(), { state: 'watching' });
  v.apply(
    ev('FolderErrors', {
      folder: 'web-src',
      errors: [
        { path: 'a.txt', error: 'permission denied' },
        { path: 'b.txt', error: 'x' },
      ],
    }),
  );
  assert.deepEqual(v.activity(), { state: 'error', error: './src: 2 item(s) not synced, first a.txt: permission denied' });
  v.apply(ev('FolderSummary', { folder: 'web-src', summary: { state: 'idle', needTotalItems: 0, pullErrors: 0 } }));
  assert.deepEqual(v.activity(), { state: 'watching' });
});

test('counts that are not counts are read as none', () => {
  const v = view();
  v.apply(ev('FolderSummary', { folder: 'web-src', summary: { state: 'idle', needTotalItems: -5 } }));
  v.apply(ev('FolderCompletion', { folder: 'web-src', device: REMOTE, needItems: 'many' }));
  assert.deepEqual(v.activity(), { state: 'watching' });
});
