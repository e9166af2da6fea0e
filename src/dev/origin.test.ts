import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatOrigin, otherOrigin } from './origin.ts';

const here = (existing: string[]) => ({ host: 'laptop', exists: (p: string) => existing.includes(p) });

test('an origin on this machine whose folder exists names the folder and may not be taken over', () => {
  assert.deepEqual(otherOrigin(formatOrigin('/home/ann/shop', 'laptop'), here(['/home/ann/shop'])), {
    where: 'folder /home/ann/shop',
    gone: false,
    localFolder: '/home/ann/shop',
  });
});

test('an origin on this machine whose folder is gone may be taken over', () => {
  assert.deepEqual(otherOrigin('laptop:/tmp/old clone', here([])), {
    where: 'folder /tmp/old clone (which no longer exists)',
    gone: true,
    localFolder: '/tmp/old clone',
  });
});

test('an origin on another machine is never taken over, whatever exists here', () => {
  assert.deepEqual(otherOrigin('desktop:/home/ann/shop', here(['/home/ann/shop'])), { where: 'folder /home/ann/shop on machine desktop', gone: false });
  assert.equal(otherOrigin('desktop:/nowhere', here([])).gone, false);
});

test('a path with colons keeps them; a missing or unreadable origin is "another folder or machine"', () => {
  assert.equal(otherOrigin('laptop:/a:b', here(['/a:b'])).localFolder, '/a:b');
  for (const origin of [undefined, '', ':/x', 'no-colon']) assert.deepEqual(otherOrigin(origin, here([])), { where: 'another folder or machine', gone: false });
});
