/**
 * The test browser itself (test/e2e/browser.ts): headless Chromium loads a page over HTTPS when it
 * was handed the CA that signed the page's certificate, and refuses the same page without it. The
 * login and front-door tests rely on both halves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, visit } from './browser.ts';

/** A throwaway CA and a certificate it signed for 127.0.0.1, made with openssl. */
function makeCertificates(): { caPem: string; key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-ca-'));
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=devtool test CA']);
    run(['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1']);
    // Browsers read the name from subjectAltName only.
    const leaf = ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '1'];
    writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1\n');
    run([...leaf, '-extfile', 'leaf.ext']);
    return {
      caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
      key: readFileSync(join(dir, 'leaf.key'), 'utf8'),
      cert: readFileSync(join(dir, 'leaf.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('Chromium trusts a page signed by the CA it was handed, and refuses it without the CA', { timeout: 120_000 }, async () => {
  const { caPem, key, cert } = makeCertificates();
  const server = createServer({ key, cert }, (_req, res) => res.end('<title>hello</title><p id="who">served over TLS</p>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const trusting = await launchBrowser({ caPem });
    try {
      const page = await trusting.browser.newPage();
      await visit(page, url);
      assert.equal(await page.textContent('#who'), 'served over TLS');
    } finally {
      await trusting.close();
    }
    const stranger = await launchBrowser();
    try {
      const page = await stranger.browser.newPage();
      await assert.rejects(visit(page, url), /ERR_CERT_AUTHORITY_INVALID/);
    } finally {
      await stranger.close();
    }
  } finally {
    server.close();
  }
});
