import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { syncthingPaths } from '../base/platform.ts';
import { SyncthingApi } from './rest.ts';

/** A Syncthing on Windows as its REST API answers: every path with `\`. Records what it was asked. */
async function windowsSyncthing(t: { after(fn: () => unknown): void }) {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    asked.push(`${req.method} ${url.pathname} ${[...url.searchParams].map(([k, v]) => `${k}=${v}`).join(' ')}`);
    const answers: Record<string, unknown> = {
      '/rest/db/need': { progress: [], queued: [], rest: [{ name: 'src\\lib\\a.ts', type: 'FILE_INFO_TYPE_FILE' }] },
      '/rest/db/file': { global: { name: 'src\\lib\\a.ts', type: 'FILE_INFO_TYPE_FILE' } },
      '/rest/events': [
        { id: 1, type: 'ItemFinished', time: '', data: { folder: 'f', item: 'src\\a.sync-conflict-20261202-010203-ABCDEFG.ts', action: 'update' } },
        { id: 2, type: 'LocalIndexUpdated', time: '', data: { folder: 'f', filenames: ['docs\\x.md', 'y.md'] } },
      ],
      '/rest/folder/errors': { errors: [{ path: 'con\\aux.js', error: 'reserved name' }] },
    };
    res.setHeader('content-type', 'application/json');
    res.end(url.pathname in answers ? JSON.stringify(answers[url.pathname]) : '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

test("a Syncthing on Windows: its paths reach devtool with /, and devtool's reach it with \\", async (t) => {
  const s = await windowsSyncthing(t);
  const api = new SyncthingApi(s.url, 'key', syncthingPaths('win32'));
  assert.deepEqual(
    (await api.need('f')).map((i) => i.name),
    ['src/lib/a.ts'],
  );
  assert.equal((await api.file('f', 'src/lib/a.ts')).global?.name, 'src/lib/a.ts');
  await api.scan('f', ['src/lib', 'b.ts']);
  const events = await api.events(0, ['ItemFinished', 'LocalIndexUpdated']);
  assert.equal(events[0]!.data.item, 'src/a.sync-conflict-20261202-010203-ABCDEFG.ts');
  assert.deepEqual(events[1]!.data.filenames, ['docs/x.md', 'y.md']);
  assert.deepEqual((await api.folderErrors('f')).errors, [{ path: 'con/aux.js', error: 'reserved name' }]);
  assert.ok(s.asked.includes('GET /rest/db/file folder=f file=src\\lib\\a.ts'), s.asked.join('\n'));
  assert.ok(s.asked.includes('POST /rest/db/scan folder=f sub=src\\lib sub=b.ts'), s.asked.join('\n'));
});

test('a Syncthing on Linux or macOS: paths pass as they are (a \\ is part of a name there)', async (t) => {
  const s = await windowsSyncthing(t);
  const api = new SyncthingApi(s.url, 'key', syncthingPaths('darwin'));
  assert.deepEqual(
    (await api.need('f')).map((i) => i.name),
    ['src\\lib\\a.ts'],
  );
  await api.file('f', 'src/lib/a.ts');
  assert.ok(s.asked.includes('GET /rest/db/file folder=f file=src/lib/a.ts'), s.asked.join('\n'));
});
