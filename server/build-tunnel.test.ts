import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { BuildTunnelError, openBuildTunnel, upgrade } from '../src/service/build-tunnel.ts';
import { tenantPreface } from './build-tunnel.ts';
import { createAccount } from './accounts.ts';
import { type App, buildApp, type ServiceConfig } from './app.ts';
import { readBuildkitUpstream } from './config.ts';
import { MemoryStore } from './store/memory.ts';

const CONFIG: ServiceConfig = { version: '9.9.9', publicUrl: 'https://devtool.example', rateLimit: { max: 1000, timeWindowMs: 60_000 } };

/** A stand-in for buildkitd on loopback: echoes what it receives, prefixed, so the test sees both directions. */
async function echoDaemon(): Promise<{ server: Server; port: number; received: () => string }> {
  let got = '';
  const server = createServer((s) => {
    s.on('data', (d: Buffer) => {
      got += d.toString();
      s.write(`echo:${d.toString()}`);
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as { port: number }).port, received: () => got };
}

async function service(config: Partial<ServiceConfig>): Promise<{ app: App; url: string; token: string; log: () => string }> {
  const store = new MemoryStore();
  let logged = '';
  const logStream = new Writable({
    write(chunk, _enc, done) {
      logged += String(chunk);
      done();
    },
  });
  const app = await buildApp({ store, config: { ...CONFIG, ...config }, logStream, logLevel: 'debug' });
  const account = await createAccount(store, 'dana', false, new Date());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, token: account.token, log: () => logged };
}

const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of closers) await c();
});

describe('build tunnel', () => {
  test('the tenant preface names the user, and only a valid user name', () => {
    assert.equal(tenantPreface('dana'), 'devtool-tenant dana\n');
    for (const bad of ['', 'Dana', 'dana\ndevtool-tenant eve', '../eve', 'eve-']) assert.throws(() => tenantPreface(bad), /cannot name a build tenant/);
  });

  test('a non-admin user tunnels bytes both ways to the daemon, after the preface naming them; the log has sizes, never the bytes', async () => {
    const daemon = await echoDaemon();
    closers.push(() => new Promise((r) => daemon.server.close(r)));
    const s = await service({ buildkit: { host: '127.0.0.1', port: daemon.port } });
    closers.push(() => s.app.close());
    const tunnel = await openBuildTunnel({ url: s.url, token: s.token });
    closers.push(() => tunnel.close());
    const socketPath = new URL(tunnel.address).pathname;
    const { connect } = await import('node:net');
    for (const payload of ['PRI * HTTP/2.0 secret-value-7f3a', 'second connection']) {
      const local = connect(socketPath);
      local.write(payload);
      const expected = `devtool-tenant dana\n${payload}`;
      const answer = await new Promise<string>((resolve) => {
        let got = '';
        local.on('data', (d: Buffer) => {
          got += d.toString().replaceAll('echo:', '');
          if (got.length >= expected.length) resolve(got);
        });
      });
      assert.equal(answer, expected, 'the preface first, then exactly what the client sent');
      local.destroy();
    }
    assert.match(daemon.received(), /^devtool-tenant dana\nPRI \* HTTP\/2.0 secret-value-7f3a.*devtool-tenant dana\nsecond connection$/s);
    await new Promise((r) => setTimeout(r, 100));
    assert.match(s.log(), /"user":"dana".*build tunnel opened/);
    assert.match(s.log(), /build tunnel closed/);
    assert.doesNotMatch(s.log(), /secret-value-7f3a/);
    assert.doesNotMatch(s.log(), new RegExp(s.token));
  });

  test('refusals are one line each: 401 for a bad token, 503 without a builder, 502 when the daemon is down', async () => {
    const s = await service({ buildkit: { host: '127.0.0.1', port: 1 } });
    closers.push(() => s.app.close());
    const refused = async (opts: { url: string; token: string }) => {
      try {
        await upgrade(opts);
      } catch (err) {
        assert.ok(err instanceof BuildTunnelError);
        assert.doesNotMatch(err.message, /\n/);
        return { status: err.status, message: err.message };
      }
      assert.fail('the upgrade went through');
    };
    const bad = await refused({ url: s.url, token: 'dvt_not-a-real-token' });
    assert.equal(bad.status, 401);
    assert.match(bad.message, /refused the build tunnel: not a devtool API token .*log in again with devtool context use https:\/\/devtool\.example$/);
    const revoked = await refused({ url: s.url, token: `dvt_${'A'.repeat(43)}` });
    assert.equal(revoked.status, 401);
    assert.match(revoked.message, /token revoked or expired/);
    const down = await refused({ url: s.url, token: s.token });
    assert.equal(down.status, 502);
    assert.match(down.message, /the cluster's BuildKit daemon cannot be reached: .*ECONNREFUSED/);

    const none = await service({});
    closers.push(() => none.app.close());
    const no = await refused({ url: none.url, token: none.token });
    assert.equal(no.status, 503);
    assert.match(no.message, /has no builder/);
    const unreachable = await refused({ url: 'http://127.0.0.1:1', token: s.token });
    assert.equal(unreachable.status, 0);
    assert.match(unreachable.message, /cannot reach the devtool service at http:\/\/127\.0\.0\.1:1 for a build: ECONNREFUSED/);
  });

  test('without Upgrade: 426 (token checked first); another protocol: 400; builds in capabilities only with a builder', async () => {
    const s = await service({ buildkit: { host: '127.0.0.1', port: 1 } });
    closers.push(() => s.app.close());
    const plain = await s.app.inject({ method: 'GET', url: '/api/v1/builds/tunnel', headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(plain.statusCode, 426);
    assert.match(plain.json().error, /needs Connection: Upgrade and Upgrade: devtool-buildkit/);
    assert.equal((await s.app.inject({ method: 'GET', url: '/api/v1/builds/tunnel' })).statusCode, 401);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve) => {
      const req = request(`${s.url}/api/v1/builds/tunnel`, { headers: { connection: 'Upgrade', upgrade: 'websocket', authorization: `Bearer ${s.token}` } });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('upgrade', () => resolve(101));
      req.end();
    });
    assert.equal(status, 400);
    const withBuilder = (await s.app.inject({ method: 'GET', url: '/api/v1/info' })).json().capabilities as string[];
    assert.ok(withBuilder.includes('builds'));
    const none = await service({});
    closers.push(() => none.app.close());
    assert.ok(!((await none.app.inject({ method: 'GET', url: '/api/v1/info' })).json().capabilities as string[]).includes('builds'));
  });
});

describe('builder settings', () => {
  const files: Record<string, string> = {
    '/tls/ca.crt': '-----BEGIN CERTIFICATE-----\nca\n',
    '/tls/tls.crt': '-----BEGIN CERTIFICATE-----\ncrt\n',
    '/tls/tls.key': '-----BEGIN EC PRIVATE KEY-----\nkey\n',
  };
  const read = (f: string) => {
    const text = files[f];
    if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    return text;
  };
  test('DEVTOOL_BUILDKIT_ADDRESS and DEVTOOL_BUILDKIT_TLS_DIR', () => {
    assert.equal(readBuildkitUpstream({}), undefined);
    assert.deepEqual(readBuildkitUpstream({ DEVTOOL_BUILDKIT_ADDRESS: 'devtool-builder.devtool.svc:1234' }), {
      host: 'devtool-builder.devtool.svc',
      port: 1234,
    });
    assert.deepEqual(readBuildkitUpstream({ DEVTOOL_BUILDKIT_ADDRESS: 'tcp://10.0.0.5:1234' }), { host: '10.0.0.5', port: 1234 });
    const tls = readBuildkitUpstream(
      { DEVTOOL_BUILDKIT_ADDRESS: 'b.svc:1234', DEVTOOL_BUILDKIT_TLS_DIR: '/tls', DEVTOOL_BUILDKIT_SERVER_NAME: 'builder' },
      read,
    );
    assert.equal(tls?.tls?.servername, 'builder');
    assert.match(tls?.tls?.key ?? '', /PRIVATE KEY/);
    for (const bad of ['b.svc', 'b.svc:0', 'b.svc:70000', 'http://b.svc:1', 'b svc:1']) {
      assert.throws(() => readBuildkitUpstream({ DEVTOOL_BUILDKIT_ADDRESS: bad }), /^Error: DEVTOOL_BUILDKIT_ADDRESS=.*: expected HOST:PORT/);
    }
    assert.throws(
      () => readBuildkitUpstream({ DEVTOOL_BUILDKIT_ADDRESS: 'b:1', DEVTOOL_BUILDKIT_TLS_DIR: '/none' }, read),
      /DEVTOOL_BUILDKIT_TLS_DIR=\/none: cannot read ca\.crt: ENOENT/,
    );
    files['/tls/tls.key'] = 'not a key';
    assert.throws(() => readBuildkitUpstream({ DEVTOOL_BUILDKIT_ADDRESS: 'b:1', DEVTOOL_BUILDKIT_TLS_DIR: '/tls' }, read), /tls\.key is not PEM/);
  });
});
