/** A service behind a private CA, over real TLS on loopback (a throwaway CA made with openssl). */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ServiceClient } from './client.ts';
import { trustedCas } from './tls.ts';

const dir = mkdtempSync(join(tmpdir(), 'devtool-tls-'));
let url = '';
let caPem = '';
let caFingerprint = '';
const server = createServer();

before(async () => {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=devtool unit CA']);
  run(['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '1', '-extfile', 'leaf.ext']);
  caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  caFingerprint = run(['x509', '-in', 'ca.pem', '-noout', '-fingerprint', '-sha256']).trim().split('=')[1]!;
  const cert = readFileSync(join(dir, 'leaf.pem'), 'utf8') + caPem;
  server.setSecureContext({ key: readFileSync(join(dir, 'leaf.key')), cert });
  server.on('request', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"1","apiVersion":"v1","capabilities":[]}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('an unknown CA: one line with the CA fingerprint and how to trust it', async () => {
  await assert.rejects(new ServiceClient({ url }).call('info'), (err: Error) => {
    assert.equal(
      err.message,
      `cannot reach the devtool service at ${url}: its TLS certificate is signed by a CA this machine does not trust (SELF_SIGNED_CERT_IN_CHAIN); ` +
        `its CA "devtool unit CA" has the SHA-256 fingerprint ${caFingerprint}; ` +
        'if that is your service, save its CA certificate (PEM) to a file and set DEVTOOL_CA_CERT=<file>',
    );
    return true;
  });
});

test('with the CA the same call works', async () => {
  assert.equal((await new ServiceClient({ url, ca: caPem }).call('info')).apiVersion, 'v1');
});

test('DEVTOOL_CA_CERT: read, joined with the stored CA; a missing or non-PEM file is one line naming it', () => {
  const file = join(dir, 'ca.pem');
  assert.equal(
    trustedCas({}, undefined, () => ''),
    undefined,
  );
  assert.equal(
    trustedCas({ DEVTOOL_CA_CERT: file }, 'STORED', (f) => readFileSync(f, 'utf8')),
    `${caPem}\nSTORED`,
  );
  assert.throws(
    () => trustedCas({ DEVTOOL_CA_CERT: '/nope.pem' }, undefined, (f) => readFileSync(f, 'utf8')),
    /DEVTOOL_CA_CERT=\/nope\.pem: cannot read it \(ENOENT\)$/,
  );
  assert.throws(() => trustedCas({ DEVTOOL_CA_CERT: join(dir, 'leaf.ext') }, undefined, (f) => readFileSync(f, 'utf8')), /not a PEM certificate/);
});
