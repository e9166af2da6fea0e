import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { startLabelProxy, upstreamUrl, type LabelProxy } from './label-proxy.ts';

const joined = (server: string, path: string): string => {
  const url = upstreamUrl(new URL(server), path);
  return typeof url === 'string' ? `refused: ${url}` : url.href;
};

test('the target keeps the API server path and appends the request path', () => {
  assert.equal(joined('https://10.0.0.1:6443', '/api/v1/pods?watch=1'), 'https://10.0.0.1:6443/api/v1/pods?watch=1');
  assert.equal(joined('https://rancher.example/k8s/clusters/c-abc', '/api/v1/namespaces'), 'https://rancher.example/k8s/clusters/c-abc/api/v1/namespaces');
  assert.equal(
    joined('https://rancher.example/k8s/clusters/c-abc/', '/apis/apps/v1'),
    'https://rancher.example/k8s/clusters/c-abc/apis/apps/v1',
    'no double slash',
  );
  assert.equal(joined('https://rancher.example/k8s/clusters/c-abc', '/'), 'https://rancher.example/k8s/clusters/c-abc/');
  assert.equal(joined('http://127.0.0.1:8001', '/version'), 'http://127.0.0.1:8001/version');
});

test('a request path that could name another server, or leave the prefix, is refused', () => {
  for (const path of ['//127.0.0.1:9/steal', '///x', '/\\127.0.0.1:9/steal', 'http://127.0.0.1:9/steal', 'https://evil.example/api', '*', '', 'api/v1']) {
    assert.match(joined('https://rancher.example/k8s/clusters/c-abc', path), /^refused: the request path must start with a single "\/"/, path);
  }
  for (const path of ['/../../other', '/api/../../x', '/%2e%2e/%2e%2e/x']) {
    assert.match(joined('https://rancher.example/k8s/clusters/c-abc', path), /^refused: .* leaves the API server's path "\/k8s\/clusters\/c-abc"/, path);
  }
  // Without a prefix a dot segment stays on the same server: harmless, and normalized.
  assert.equal(joined('https://10.0.0.1:6443', '/api/../version'), 'https://10.0.0.1:6443/version');
});

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

async function recordingServer(): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Status"}');
  });
  server.on('upgrade', (req, socket) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

/** One raw request to the proxy: the path is sent exactly as given. */
function send(proxy: LabelProxy, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${proxy.token}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      // The reason: the message of a Kubernetes Status, or the plain text of a refused upgrade.
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: res.headers['content-type'] === 'application/json' ? (JSON.parse(body) as { message: string }).message : body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

let apiServer: Awaited<ReturnType<typeof recordingServer>>;
let otherServer: Awaited<ReturnType<typeof recordingServer>>;
let proxy: LabelProxy;

before(async () => {
  apiServer = await recordingServer();
  otherServer = await recordingServer();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'rancher', server: `http://127.0.0.1:${apiServer.port}/k8s/clusters/c-abc`, skipTLSVerify: true }],
    users: [{ name: 'me', token: 'the-users-token' }],
    contexts: [{ name: 'rancher', cluster: 'rancher', user: 'me' }],
    currentContext: 'rancher',
  });
  proxy = await startLabelProxy(kc, { environment: 'shop', namespace: 'ns', contextName: 'rancher' });
});

after(async () => {
  await proxy?.close();
  apiServer?.server.close();
  otherServer?.server.close();
});

test('the proxy never sends a request, or the user token, to another server', async () => {
  const other = `127.0.0.1:${otherServer.port}`;
  const attempts: [string, Record<string, string>?][] = [
    [`//${other}/steal`],
    [`/${proxy.token}//${other}/steal`],
    [`http://${other}/steal`],
    [`/\\${other}/steal`],
    [`//${other}/steal`, { connection: 'Upgrade', upgrade: 'websocket' }],
  ];
  for (const [path, headers] of attempts) {
    const r = await send(proxy, path, headers);
    assert.equal(r.status, 400, path);
    assert.match(r.body, /devtool proxy: refused: the request path must start with a single "\/"/, path);
  }
  assert.deepEqual(otherServer.seen, [], 'nothing reached the other server');
  assert.deepEqual(apiServer.seen, [], 'nor the API server');
});

test('an API server under a path prefix receives the prefix, with the user token', async () => {
  apiServer.seen.length = 0;
  assert.equal((await send(proxy, '/api/v1/namespaces/ns/configmaps?limit=5')).status, 200);
  assert.equal((await send(proxy, `/${proxy.token}/apis/apps/v1/namespaces/ns/deployments`, { authorization: '' })).status, 200);
  assert.equal((await send(proxy, `/${proxy.token}?timeout=5s`, { authorization: '' })).status, 200);
  assert.deepEqual(
    apiServer.seen.map((s) => s.url),
    [
      '/k8s/clusters/c-abc/api/v1/namespaces/ns/configmaps?limit=5',
      '/k8s/clusters/c-abc/apis/apps/v1/namespaces/ns/deployments',
      '/k8s/clusters/c-abc/?timeout=5s',
    ],
  );
  for (const s of apiServer.seen) assert.equal(s.headers.authorization, 'Bearer the-users-token');
  assert.deepEqual(otherServer.seen, []);
});
