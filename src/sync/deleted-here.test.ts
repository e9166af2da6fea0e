import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readLocalIndex } from './deleted-here.ts';
import type { NeedItem } from './rest.ts';

test('the local index of the paths asked: entries, paths gone from both indexes, errors', async () => {
  const entries: Record<string, { local?: Partial<NeedItem> }> = {
    'a.txt': { local: { deleted: true, version: ['LLLLLLL:2'] } },
    'b.txt': { local: { name: '', deleted: false, version: [] } },
  };
  let running = 0;
  let most = 0;
  const api = {
    file: async (_folder: string, name: string) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 1));
      running--;
      if (name === 'broken') throw new Error('GET /rest/db/file: HTTP 500 boom');
      const e = entries[name];
      if (!e) throw new Error('GET /rest/db/file: HTTP 404 No such object in the index');
      return e as { local?: NeedItem };
    },
  };
  const names = ['a.txt', 'b.txt', 'gone.txt', ...Array.from({ length: 30 }, (_, i) => `x${i}`)];
  const index = await readLocalIndex(api, 'f', names);
  assert.deepEqual(index.get('a.txt'), { deleted: true, version: ['LLLLLLL:2'] });
  assert.deepEqual(index.get('b.txt'), { deleted: false, version: [] });
  assert.equal(index.has('gone.txt'), false);
  assert.ok(most > 1 && most <= 8, `requests at once: ${most}`);
  await assert.rejects(readLocalIndex(api, 'f', ['broken']), /HTTP 500/);
  assert.equal((await readLocalIndex(api, 'f', [])).size, 0);
});
