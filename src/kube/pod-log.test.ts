import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { KubeClient } from './client.ts';
import { openPodLog, podLogParams } from './pod-log.ts';

test('the query: the container, and only what is asked (tailLines=0 included)', () => {
  assert.equal(podLogParams('main', { follow: false, timestamps: false }).toString(), 'container=main');
  assert.equal(
    podLogParams('main', { follow: true, tailLines: 0, sinceSeconds: 600, timestamps: true }).toString(),
    'container=main&follow=true&tailLines=0&sinceSeconds=600&timestamps=true',
  );
  assert.equal(
    podLogParams('main', { follow: true, sinceTime: '2026-12-02T10:00:02.5Z', timestamps: true }).toString(),
    'container=main&follow=true&sinceTime=2026-12-02T10%3A00%3A02.5Z&timestamps=true',
  );
});

/** A loopback server answering log requests with `answer`, and a client of it in namespace dev (a server URL with a path, as behind a proxy). */
async function logServer(answer: (url: string, res: ServerResponse) => void) {
  const urls: string[] = [];
  const server = createServer((req, res) => {
    urls.push(req.url ?? '');
    answer(req.url ?? '', res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = {
    namespace: 'dev',
    context: { name: 'alpha' },
    kc: { getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}/k8s/` }), applyToHTTPSOptions: async () => {} },
  } as unknown as KubeClient;
  return { client, urls, close: () => server.close() };
}

test('a log streamed chunk by chunk until its end', async () => {
  const s = await logServer((_url, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('one\n');
    setTimeout(() => res.end('two\n'), 10);
  });
  const chunks: string[] = [];
  await openPodLog(s.client, 'web-1', 'main', { follow: true, tailLines: 0, timestamps: false }, (c) => chunks.push(c.toString())).done;
  assert.deepEqual(chunks, ['one\n', 'two\n']);
  assert.deepEqual(s.urls, ['/k8s/api/v1/namespaces/dev/pods/web-1/log?container=main&follow=true&tailLines=0']);
  s.close();
});

test('a refusal fails with the API server reason; a stop ends a followed log quietly', async () => {
  const s = await logServer((url, res) => {
    if (url.includes('web-2')) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', message: 'container "main" in pod "web-2" is waiting to start: ContainerCreating' }));
      return;
    }
    res.writeHead(200);
    res.write('first\n');
  });
  await assert.rejects(
    openPodLog(s.client, 'web-2', 'main', { follow: false, timestamps: false }, () => {}).done,
    /^DevtoolError: 400 container "main" in pod "web-2" is waiting to start: ContainerCreating$/,
  );
  const chunks: string[] = [];
  const stream = openPodLog(s.client, 'web-1', 'main', { follow: true, timestamps: false }, (c) => chunks.push(c.toString()));
  while (chunks.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  stream.stop();
  await stream.done;
  assert.deepEqual(chunks, ['first\n']);
  s.close();
});

test('a connection dropped before the end of the log is a failure', async () => {
  const s = await logServer((_url, res) => {
    res.writeHead(200);
    res.write('partial\n');
    setTimeout(() => res.socket?.destroy(), 10);
  });
  await assert.rejects(openPodLog(s.client, 'web-1', 'main', { follow: true, timestamps: false }, () => {}).done, /the connection closed before the log ended/);
  s.close();
});
