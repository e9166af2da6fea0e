/**
 * The service's Kubernetes clients against an HTTPS server on loopback standing in for the API
 * server (real TLS, a throwaway CA made with openssl): how many connections its calls open.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { isConnectionLoss, makeKeepAliveApiClient, retryingReads } from './kube-api.ts';

const dir = mkdtempSync(join(tmpdir(), 'devtool-kube-api-'));
const server = createServer();
let connections = 0;
const authorizations: (string | undefined)[] = [];
/** What the server read: method, path and body of each request. */
const seen: string[] = [];
let kubeconfig = '';

before(async () => {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=kube-api unit CA']);
  run(['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '1', '-extfile', 'leaf.ext']);
  server.setSecureContext({ key: readFileSync(join(dir, 'leaf.key')), cert: readFileSync(join(dir, 'leaf.pem')) });
  server.on('secureConnection', () => connections++);
  server.on('request', (req, res) => {
    authorizations.push(req.headers.authorization);
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`.trim());
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  kubeconfig = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority': join(dir, 'ca.pem') } }],
    users: [{ name: 'u', user: { token: 'the-token' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
});

after(() => {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function connectionsFor(calls: (kc: k8s.KubeConfig) => Promise<unknown>): Promise<number> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  server.closeAllConnections();
  const before = connections;
  await calls(kc);
  return connections - before;
}

test("client-node's own clients open a connection per call; the service's share one, each call still authenticated", async () => {
  const threeCalls = async (core: k8s.CoreV1Api) => {
    for (let i = 0; i < 3; i++) await core.listNamespace();
  };
  assert.equal(await connectionsFor((kc) => threeCalls(kc.makeApiClient(k8s.CoreV1Api))), 3, 'the behaviour this works around');
  authorizations.length = 0;
  assert.equal(await connectionsFor((kc) => threeCalls(makeKeepAliveApiClient(k8s, kc, k8s.CoreV1Api))), 1);
  assert.deepEqual(authorizations, ['Bearer the-token', 'Bearer the-token', 'Bearer the-token']);
  // Two API groups on one kubeconfig: one pool.
  const shared = await connectionsFor(async (kc) => {
    await makeKeepAliveApiClient(k8s, kc, k8s.CoreV1Api).listNamespace();
    await makeKeepAliveApiClient(k8s, kc, k8s.RbacAuthorizationV1Api).listClusterRole();
  });
  assert.equal(shared, 1);
});

test('reads are sent once more when the kept-alive connection was lost under them; writes and HTTP refusals are not', async () => {
  const lost = Object.assign(new Error('Invalid response body while trying to fetch https://10.96.0.1/api/v1/namespaces/x: Premature close'), {
    code: 'ERR_STREAM_PREMATURE_CLOSE',
  });
  const refused = Object.assign(new Error('HTTP-Code: 404'), { code: 404 });
  const calls: string[] = [];
  const failures: Record<string, unknown[]> = { readNamespace: [lost], listNamespace: [refused], createNamespace: [lost] };
  const api = {
    async readNamespace() {
      calls.push('read');
      const f = failures.readNamespace!.shift();
      if (f) throw f;
      return 'ns';
    },
    async listNamespace() {
      calls.push('list');
      const f = failures.listNamespace!.shift();
      if (f) throw f;
      return [];
    },
    async createNamespace() {
      calls.push('create');
      const f = failures.createNamespace!.shift();
      if (f) throw f;
      return 'made';
    },
  };
  const client = retryingReads(api);
  assert.equal(await client.readNamespace(), 'ns');
  await assert.rejects(client.listNamespace(), /HTTP-Code: 404/);
  await assert.rejects(client.createNamespace(), /Premature close/);
  assert.deepEqual(calls, ['read', 'read', 'list', 'create']);
  assert.equal(isConnectionLoss(Object.assign(new Error('x'), { code: 'ECONNRESET' })), true);
  assert.equal(isConnectionLoss(refused), false);
});

test('a DELETE with a body on a kept-alive connection is framed: the next request on it is read whole', async () => {
  seen.length = 0;
  const opened = await connectionsFor(async (kc) => {
    const core = makeKeepAliveApiClient(k8s, kc, k8s.CoreV1Api);
    await core.deleteNamespacedSecret({ name: 's', namespace: 'n', body: { preconditions: { uid: 'é-1' } } }).catch(() => undefined);
    await core.listNamespace();
  });
  assert.equal(opened, 1);
  assert.deepEqual(seen, ['DELETE /api/v1/namespaces/n/secrets/s {"preconditions":{"uid":"é-1"}}', 'GET /api/v1/namespaces']);
});
