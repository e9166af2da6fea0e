import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { type BuildTunnelError, openBuildTunnel } from './build-tunnel.ts';

/** A stand-in for the service: accepts the first `accept` upgrades (echoing bytes), then refuses with 401. */
async function fakeService(accept: number) {
  let seen = 0;
  const headers: Record<string, string | string[] | undefined>[] = [];
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket) => {
    headers.push(req.headers);
    if (seen++ >= accept) {
      const body = JSON.stringify({ error: 'token revoked or expired: log in again' });
      socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    socket.write('HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: devtool-buildkit\r\n\r\n');
    socket.on('data', (d: Buffer) => socket.write(`echo:${d}`));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, headers };
}

async function roundTrip(address: string, text: string): Promise<string | undefined> {
  const s = connect(new URL(address).pathname);
  s.write(text);
  const got = await new Promise<string | undefined>((resolve) => {
    s.once('data', (d: Buffer) => resolve(d.toString()));
    s.once('close', () => resolve(undefined));
  });
  s.destroy();
  return got;
}

test('the first upgrade serves the first connection; a later refusal is kept as the cause, in one line', async () => {
  const svc = await fakeService(1);
  const tunnel = await openBuildTunnel({ url: svc.url, token: 'dvt_x' });
  try {
    assert.match(tunnel.address, /^unix:\/\/\/.+\/devtool-build-[^/]+\/buildkit\.sock$/);
    const path = new URL(tunnel.address).pathname;
    assert.equal(statSync(dirname(path)).mode & 0o777, 0o700, 'only this user enters the directory');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(svc.headers.length, 1, 'one upgrade before anything is built');
    assert.equal(svc.headers[0]?.['authorization'], 'Bearer dvt_x');
    assert.equal(svc.headers[0]?.['upgrade'], 'devtool-buildkit');
    assert.equal(await roundTrip(tunnel.address, 'hello'), 'echo:hello');
    assert.equal(tunnel.failure, undefined);
    assert.equal(await roundTrip(tunnel.address, 'again'), undefined, 'the refused connection is closed');
    const failure = tunnel.failure as BuildTunnelError | undefined;
    assert.equal(failure?.status, 401);
    assert.equal(failure?.message, `the devtool service at ${svc.url} refused the build tunnel: token revoked or expired: log in again`);
  } finally {
    await tunnel.close();
    svc.server.close();
  }
  assert.equal(existsSync(dirname(new URL(tunnel.address).pathname)), false, 'the directory goes with the tunnel');
});

test('a refused first upgrade fails the opening, and no listener is left', async () => {
  const svc = await fakeService(0);
  await assert.rejects(openBuildTunnel({ url: svc.url, token: 'dvt_x' }), (err: Error & { status?: number }) => {
    assert.equal(err.status, 401);
    assert.doesNotMatch(err.message, /\n/);
    return true;
  });
  svc.server.close();
});
