import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../server/accounts.ts';
import { type App, buildApp } from '../../server/app.ts';
import { MemoryStore } from '../../server/store/memory.ts';
import { DevtoolError } from '../base/errors.ts';
import { ServiceClient, ServiceError } from './client.ts';

// The client against the real service program on a loopback port (its store in memory).
describe('service client', () => {
  let app: App;
  let url: string;
  const store = new MemoryStore();
  let token: string;

  before(async () => {
    app = await buildApp({
      store,
      config: { version: '1.2.3', publicUrl: 'https://svc.example', rateLimit: { max: 100, timeWindowMs: 60_000 } },
      logStream: false,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    token = (await createAccount(store, 'alice', false, new Date())).token;
  });
  after(() => app.close());

  test('calls each kind of route with the contract types', async () => {
    const c = new ServiceClient({ url: `${url}/`, token });
    assert.equal((await c.call('info')).version, '1.2.3');
    assert.deepEqual(await c.call('me'), { name: 'alice', admin: false, namespace: 'alice-devtool' });
    const created = await c.call('createToken', { body: { name: 'laptop', expiresInDays: 30 } });
    assert.match(created.token, /^dvt_/);
    assert.equal((await c.call('listTokens')).tokens.length, 2);
    await c.call('revokeToken', { params: { id: created.id } });
    assert.deepEqual(await c.call('createNamespace', { body: { name: 'web' } }), { name: 'web', status: 'Active', owner: 'alice', personal: false });
    await c.call('deleteNamespace', { params: { name: 'web' } });
    assert.deepEqual(
      (await c.call('listNamespaces')).namespaces.map((n) => `${n.name} ${n.status}`),
      ['alice-devtool Active', 'web Terminating'],
    );
    await c.call('putSecret', { params: { name: 'TOKEN_X' }, body: { value: 'v/1 ?&' } });
    assert.deepEqual(await c.call('listSecrets'), { secrets: [{ name: 'TOKEN_X' }] });
    assert.deepEqual(await c.call('secretValues'), { values: { TOKEN_X: 'v/1 ?&' } });
    await c.call('deleteSecret', { params: { name: 'TOKEN_X' } });
  });

  test("a refusal is a ServiceError with the service's one line and status", async () => {
    const revoked = new ServiceClient({ url, token: `dvt_${'x'.repeat(43)}` });
    await assert.rejects(revoked.call('me'), (err: unknown) => {
      assert.ok(err instanceof ServiceError);
      assert.equal(err.status, 401);
      assert.equal(err.message, 'token revoked or expired: log in again with devtool context use https://svc.example');
      return true;
    });
    const c = new ServiceClient({ url, token });
    await assert.rejects(c.call('createNamespace', { body: { name: 'Not Valid' } }), { message: /^body\.name: invalid value: DNS-1123 label/ });
    await assert.rejects(c.call('deleteSecret', { params: { name: 'NOPE' } }), { message: 'no stored secret NOPE' });
  });

  test('an unreachable, silent or broken service is one line naming it', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(new ServiceClient({ url: `http://127.0.0.1:${port}` }).call('info'), {
      message: `cannot reach the devtool service at http://127.0.0.1:${port}: nothing listens there (ECONNREFUSED)`,
    });

    await assert.rejects(new ServiceClient({ url: 'https://no-such-host.invalid' }).call('info'), {
      message: /^cannot reach the devtool service at https:\/\/no-such-host\.invalid: its host name does not resolve \((ENOTFOUND|EAI_AGAIN)\)$/,
    });

    const silent = createServer(() => {});
    const broken = createServer((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>'));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    try {
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      await assert.rejects(new ServiceClient({ url: silentUrl, timeoutMs: 300 }).call('info'), {
        message: `the devtool service at ${silentUrl} did not answer within 300ms (DEVTOOL_RESPONSE_TIMEOUT sets the wait): check that it is running`,
      });
      const brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
      await assert.rejects(new ServiceClient({ url: brokenUrl }).call('info'), (err: unknown) => {
        assert.ok(err instanceof DevtoolError);
        assert.equal(err.message, `the devtool service at ${brokenUrl} failed (502 on GET /api/v1/info)`);
        return true;
      });
    } finally {
      silent.closeAllConnections();
      silent.close();
      broken.close();
    }
  });
});
