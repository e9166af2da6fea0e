import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BuildBackend } from './backend.ts';
import { askedThrough, lookupPushed } from './pushed.ts';
import type { TagLookup } from './registry.ts';

/** A builder that answers lookups with `answer` and records what it was asked; it never builds. */
function builder(answer?: TagLookup): BuildBackend & { readonly asked: string[] } {
  const asked: string[] = [];
  return {
    name: 'the hosted builder of https://devtool.test',
    asked,
    build: () => Promise.reject(new Error('not a build')),
    close: () => Promise.resolve(),
    ...(answer
      ? {
          lookup: async (image: string) => {
            asked.push(image);
            return answer;
          },
        }
      : {}),
  };
}

// Nothing listens on port 1: this machine cannot reach that registry.
const unreachable = { registry: '127.0.0.1:1', repository: 'shop/web', tag: 'devtool-0123' };

test('a registry this machine cannot reach is asked through the builder, which says it is there', async () => {
  const hosted = builder({ state: 'present' });
  const found = await lookupPushed(unreachable, undefined, async () => hosted);
  assert.equal(found.state, 'present');
  assert.deepEqual(hosted.asked, ['127.0.0.1:1/shop/web:devtool-0123']);
  assert.equal(askedThrough(found), ' (asked through the hosted builder of https://devtool.test)');
});

test('the builder finding no such tag is an answer: absent', async () => {
  assert.equal((await lookupPushed(unreachable, undefined, async () => builder({ state: 'absent' }))).state, 'absent');
});

test('when neither can tell, the reason names both', async () => {
  const found = await lookupPushed(unreachable, undefined, async () => builder({ state: 'unknown', reason: 'the hosted builder: no answer' }));
  assert.equal(found.state, 'unknown');
  assert.match(found.state === 'unknown' ? found.reason : '', /^http:\/\/127\.0\.0\.1:1: .+; the hosted builder: no answer$/);
});

test('a builder that cannot look up (the Docker daemon) leaves the registry unknown', async () => {
  const found = await lookupPushed(unreachable, undefined, async () => builder());
  assert.equal(found.state, 'unknown');
  assert.equal(askedThrough(found), '');
});

test('a registry that answers is enough: the builder is not opened', async () => {
  const server: Server = createServer((req, res) => {
    res.statusCode = req.url === '/v2/shop/web/manifests/devtool-0123' ? 200 : 404;
    res.setHeader('docker-content-digest', 'sha256:abc');
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const registry = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const never = () => Promise.reject(new Error('the builder was opened'));
    assert.deepEqual(await lookupPushed({ ...unreachable, registry }, undefined, never), { state: 'present', digest: 'sha256:abc' });
    assert.deepEqual(await lookupPushed({ ...unreachable, registry, tag: 'other' }, undefined, never), { state: 'absent' });
  } finally {
    server.close();
  }
});
