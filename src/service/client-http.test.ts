/**
 * The client's transport (http.ts) against real node:http servers on loopback, each answering in
 * the way under test: what is sent, redirects, a body that never ends, kept-alive connections the
 * server cuts, and the process exiting as soon as the command is done.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DevtoolError } from '../base/errors.ts';
import { ServiceClient, ServiceError } from './client.ts';

const servers: Server[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handler: RequestListener): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      text += c;
    });
    req.on('end', () => resolve(text));
  });
}

test('a request carries the token, the JSON body with its length, and the path parameters encoded', async () => {
  const seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const url = await serve(async (req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: await readBody(req) });
    res.writeHead(204).end();
  });
  const c = new ServiceClient({ url, token: 'dvt_t' });
  assert.equal(await c.call('putSecret', { params: { name: 'A_B' }, body: { value: 'välue' } }), undefined);
  assert.equal(await c.call('deleteSecret', { params: { name: 'x/y' } }), undefined);
  assert.equal(seen[0]!.method, 'PUT');
  assert.equal(seen[0]!.url, '/api/v1/secrets/A_B');
  assert.equal(seen[0]!.headers.authorization, 'Bearer dvt_t');
  assert.equal(seen[0]!.headers['content-type'], 'application/json');
  assert.equal(seen[0]!.body, '{"value":"välue"}');
  assert.equal(seen[0]!.headers['content-length'], String(Buffer.byteLength(seen[0]!.body)));
  assert.equal(seen[1]!.method, 'DELETE');
  assert.equal(seen[1]!.url, '/api/v1/secrets/x%2Fy');
  assert.equal(seen[1]!.headers['content-type'], undefined);
});

test('the client keeps the devtool version named by the latest answer, a refusal too, and keeps it when an answer names none', async () => {
  const versions = ['0.3.0', '0.4.0-rc.1', undefined];
  const url = await serve((_req, res) => {
    const version = versions.shift();
    const headers = version ? { 'devtool-version': version } : {};
    if (version === '0.4.0-rc.1') return res.writeHead(403, { ...headers, 'content-type': 'application/json' }).end('{"error":"no"}');
    res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end('{"name":"a","admin":false,"namespace":"a-devtool"}');
  });
  const c = new ServiceClient({ url, token: 'dvt_t' });
  assert.equal(c.serviceVersion, undefined);
  await c.call('me');
  assert.equal(c.serviceVersion, '0.3.0');
  await assert.rejects(c.call('me'), ServiceError);
  assert.equal(c.serviceVersion, '0.4.0-rc.1');
  await c.call('me');
  assert.equal(c.serviceVersion, '0.4.0-rc.1');
});

test('a redirect is not followed (the token would go along): one line naming where it points', async () => {
  let followed = 0;
  const elsewhere = await serve((_req, res) => {
    followed++;
    res.end('{}');
  });
  const url = await serve((_req, res) => res.writeHead(302, { location: `${elsewhere}/login` }).end());
  await assert.rejects(new ServiceClient({ url, token: 'dvt_t' }).call('me'), (err: unknown) => {
    assert.ok(err instanceof DevtoolError && !(err instanceof ServiceError));
    assert.equal(
      err.message,
      `cannot reach the devtool service at ${url}: GET /api/v1/me is redirected (302) to ${elsewhere}/login; use the service's own URL`,
    );
    return true;
  });
  assert.equal(followed, 0);
});

test('a 4xx without a { error } body (a proxy page) and a 500 with one: one line with the status', async () => {
  const url = await serve((req, res) => {
    if (req.url === '/api/v1/me') res.writeHead(404, { 'content-type': 'text/html' }).end('<html>\n<h1>Not Found</h1></html>');
    else json(res, 500, { error: 'store down:\nretry' });
  });
  const c = new ServiceClient({ url });
  await assert.rejects(c.call('me'), { message: `the devtool service at ${url} failed (404 on GET /api/v1/me)`, status: 404 });
  await assert.rejects(c.call('info'), { message: `the devtool service at ${url} failed (500 on GET /api/v1/info): store down: retry`, status: 500 });
});

test('an answer whose body never ends is bounded by the timeout too', async () => {
  const url = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"version":');
  });
  const started = Date.now();
  await assert.rejects(new ServiceClient({ url, timeoutMs: 300 }).call('info'), {
    message: `the devtool service at ${url} did not answer within 300ms (DEVTOOL_RESPONSE_TIMEOUT sets the wait): check that it is running`,
  });
  assert.ok(Date.now() - started < 3000, 'gave up at the timeout');
});

test('a listener that accepts and never answers is given up on at the connect timeout, the TLS handshake named', async () => {
  const silent = createNetServer((socket) => sockets.push(socket));
  const sockets: Socket[] = [];
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
  const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const heard: string[] = [];
  const started = Date.now();
  await assert.rejects(new ServiceClient({ url, timeoutMs: 60_000, connectTimeoutMs: 300, notice: (line) => heard.push(line) }).call('info'), {
    message:
      `cannot reach the devtool service at ${url} (no TLS handshake within 300ms; DEVTOOL_CONNECT_TIMEOUT sets the wait): ` +
      'check that it is running and that the network to it (a VPN) is up',
  });
  assert.ok(Date.now() - started < 3000, 'gave up at the connect timeout, not the answer timeout');
  assert.deepEqual(heard, [], 'no notice before SLOW_MS');
});

test('a kept-alive connection the server cut is tried again on a new one for a GET, not for a POST', async () => {
  // Each connection answers its first request and drops the next one without a word, as a server
  // does whose idle timeout ran out just as the request arrived.
  const served = new WeakMap<Socket, number>();
  let requests = 0;
  const url = await serve((req, res) => {
    requests++;
    const n = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, n);
    if (n > 1) req.socket.destroy();
    else json(res, req.method === 'POST' ? 201 : 200, { name: 'web', status: 'Active', owner: 'a', personal: false, namespaces: [] });
  });
  const c = new ServiceClient({ url, token: 'dvt_t' });
  await c.call('listNamespaces');
  assert.deepEqual(await c.call('listNamespaces'), { name: 'web', status: 'Active', owner: 'a', personal: false, namespaces: [] });
  assert.equal(requests, 3, 'the second GET: dropped on the kept-alive connection, answered on a new one');
  await assert.rejects(c.call('createNamespace', { body: { name: 'web' } }), {
    message: `cannot reach the devtool service at ${url}: the connection was cut (ECONNRESET)`,
  });
  assert.equal(requests, 4, 'the POST was sent once');
});

test('the process can end as soon as its calls are answered: no pooled connection or timer holds it', async () => {
  const url = await serve((_req, res) => json(res, 200, { version: '1', apiVersion: 'v1', capabilities: [] }));
  const client = fileURLToPath(new URL('./client.ts', import.meta.url));
  const script =
    `const { ServiceClient } = await import(${JSON.stringify(client)});` +
    `const c = new ServiceClient({ url: ${JSON.stringify(url)} });` +
    'await Promise.all([c.call("info"), c.call("info")]); await c.call("info"); await new Promise((r) => setImmediate(r));' +
    'console.log(JSON.stringify(process.getActiveResourcesInfo()));';
  // Not execFileSync: the server answers from this process's event loop.
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  // What would keep the process alive. The server keeps its connections open (5 s); with the
  // global fetch, undici's pooled sockets were here and held the exit (~100 ms and more).
  const holding = (JSON.parse(stdout.trim().split('\n').pop()!) as string[]).filter((r) => r === 'TCPSocketWrap' || r === 'TLSWrap' || r === 'Timeout');
  assert.deepEqual(holding, []);
});

test("a pipeline's log streams: pieces arrive before the answer ends, past the call timeout; a refusal is one line", async () => {
  let release: () => void = () => undefined;
  const url = await serve((req, res) => {
    if (req.url?.endsWith('/nope/log')) return json(res, 404, { error: 'no pipeline nope in namespace ns' });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('cloning\n');
    release = () => res.end('deployed\n');
  });
  const c = new ServiceClient({ url, token: 'dvt_t', timeoutMs: 200 });
  const pieces: string[] = [];
  const done = c.call('pipelineLog', {
    params: { namespace: 'ns', name: 'app' },
    onText: (text) => {
      pieces.push(text);
      // The first piece is here while the run goes on; the answer ends later than the timeout.
      if (pieces.length === 1) setTimeout(() => release(), 400);
    },
  });
  await done;
  assert.deepEqual(pieces.join(''), 'cloning\ndeployed\n');
  assert.equal(pieces[0], 'cloning\n');
  await assert.rejects(c.call('pipelineLog', { params: { namespace: 'ns', name: 'nope' }, onText: () => undefined }), {
    message: 'no pipeline nope in namespace ns',
  });
});

test("a pipeline's log cut by an abort ends like its end", async () => {
  const url = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('line 1\n');
  });
  const pieces: string[] = [];
  const abort = new AbortController();
  await new ServiceClient({ url, timeoutMs: 200 }).call('pipelineLog', {
    params: { namespace: 'ns', name: 'app' },
    onText: (t) => {
      pieces.push(t);
      setTimeout(() => abort.abort(), 50);
    },
    signal: abort.signal,
  });
  assert.deepEqual(pieces, ['line 1\n']);
});
