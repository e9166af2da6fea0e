/**
 * Accounts and login on the devtool service installed by its chart (installed-service.ts), reached
 * at https://devtool.devtool.test through the front door and driven through real Chromium that
 * trusts the front door's CA: sign up, sign in, a token made on the tokens page and used from the
 * CLI (refused until the CLI is given the CA with DEVTOOL_CA_CERT, then trusted through the CA it
 * stored), revoked there and refused; the CLI's browser login (loopback + PKCE) and its device-code
 * login, each ending with the API token stored 0600.
 *
 * Two replicas serve behind the ingress, and either may answer any request of a login (the Service
 * picks a replica for each connection the proxy opens), so these tests do not claim that a second
 * replica took part; service-install.e2e.test.ts shows one replica taking over from the other.
 *
 * One test stays on the service program started here (service.ts startService): a service behind
 * a private CA of the test's own that presents that CA in its chain, with the whole one-line
 * message checked; through the front door, the fingerprint in it is checked against ca.crt.
 */
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { BrowserContext, Page } from 'playwright-core';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { ServiceClient } from '../../src/service/client.ts';
import { launchBrowser, submit, visit, type TestBrowser } from './browser.ts';
import { createSandbox, runDevtool, type Sandbox, spawnDevtool } from './cli.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';
import { runInPty } from './pty.ts';
import { installedService, type InstalledService } from './installed-service.ts';
import { tokenOnPage } from './dashboard-browser.ts';
import { createUser, type RunningService, startService } from './service.ts';

const run = randomBytes(3).toString('hex');
const serviceNs = `e2e-login-${run}`;
const PASSWORD = 'correct horse battery';
let core: k8s.CoreV1Api;
/** The private-CA test's own service program (the last describe). */
let service: RunningService;
let kubeEnv: Record<string, string>;
const tls = { dir: '', caFile: '', fingerprint: '', key: '', cert: '' };

/** A throwaway CA (openssl) and a certificate it signed for 127.0.0.1: the HTTPS front of the service. */
function makeCa(): void {
  tls.dir = mkdtempSync(join(tmpdir(), 'devtool-login-ca-'));
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: tls.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=devtool login e2e CA']);
  run(['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(tls.dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '1', '-extfile', 'leaf.ext']);
  tls.caFile = join(tls.dir, 'ca.pem');
  tls.fingerprint = run(['x509', '-in', 'ca.pem', '-noout', '-fingerprint', '-sha256']).trim().split('=')[1]!;
  tls.key = readFileSync(join(tls.dir, 'leaf.key'), 'utf8');
  tls.cert = readFileSync(join(tls.dir, 'leaf.pem'), 'utf8') + readFileSync(tls.caFile, 'utf8');
}

/** The CLI without blocking this process (which serves the HTTPS front meanwhile). */
function devtoolAsync(sb: Sandbox, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnDevtool(args, { env: { ...sb.env, ...env } });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** HTTPS in front of the service, as the ingress is in a cluster. */
async function httpsFront(target: string): Promise<{ url: string; server: HttpsServer }> {
  const server = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const devtool = (sb: Sandbox, args: string[], env: Record<string, string> = {}) => runDevtool(args, { env: { ...sb.env, ...env } });
const storedContexts = (sb: Sandbox) =>
  JSON.parse(readFileSync(join(sb.devtoolHome, 'contexts.json'), 'utf8')) as {
    current: string;
    contexts: Record<string, { token?: string; userId?: string; certificate?: string }>;
  };

/** Fills in and sends the sign-up form; then `arrived` awaits the page it leads to. */
async function signUp(page: Page, name: string, arrived: () => Promise<unknown>): Promise<void> {
  await submit(
    page,
    async () => {
      await page.fill('#signup input[name=name]', name);
      await page.fill('#signup input[name=password]', PASSWORD);
      await page.fill('#signup input[name=password2]', PASSWORD);
      await page.click('#signup button');
    },
    arrived,
  );
}

/** Fills in and sends the sign-in form; then `arrived` awaits the page it leads to. */
async function signIn(page: Page, name: string, password: string, arrived: () => Promise<unknown>): Promise<void> {
  await submit(
    page,
    async () => {
      await page.fill('#signin input[name=name]', name);
      await page.fill('#signin input[name=password]', password);
      await page.click('#signin button');
    },
    arrived,
  );
}

describe('accounts and login through the browser, on the installed service', { timeout: 300_000 }, () => {
  let svc: InstalledService;
  let chromium: TestBrowser;
  /** The CLI's first login to the service: as a user does, with the CA they were given. */
  const trustingCa = () => ({ DEVTOOL_CA_CERT: svc.caFile });

  before(async () => {
    svc = await installedService();
    chromium = await launchBrowser({ caPem: svc.caPem });
  });

  after(async () => {
    await chromium?.close();
    await svc?.removeUsers();
  });

  test('sign up, sign in, create a token on the page, use it from the CLI, revoke it on the page: the CLI is refused in one line', async () => {
    const user = `web${run}`;
    const url = svc.url;
    const context: BrowserContext = await chromium.browser.newContext();
    const page = await context.newPage();
    await visit(page, `${url}/account/tokens`);
    assert.match(page.url(), /\/login\?next=%2Faccount%2Ftokens$/);
    await signUp(page, user, () => page.waitForURL(`${url}/account/tokens`));
    await svc.adoptUser(user);
    const ns = await svc.core.readNamespace({ name: `${user}-devtool` });
    assert.equal(ns.metadata?.labels?.['devtool.dev/owner'], user, 'sign-up made the personal namespace');

    await submit(
      page,
      () => page.click('nav button'),
      () => page.waitForURL(/\/login$/),
    );
    await signIn(page, user, 'not the password', () => page.waitForSelector('#error'));
    assert.equal(await page.textContent('#error'), 'Wrong user name or password.');
    // Signed in from /login with no page to return to: Home, the dashboard.
    await signIn(page, user, PASSWORD, () => page.waitForURL(`${url}/`));
    const token = await tokenOnPage(url, page, 'from the e2e test');
    assert.match(token, /^dvt_[A-Za-z0-9_-]{43}$/);

    const sb = createSandbox();
    // The front door's CA is nobody's root: the CLI refuses the service until it is told to trust it.
    const untrusted = devtool(sb, ['context', 'use', url, '--token', token]);
    assert.equal(untrusted.code, 1);
    assert.ok(
      untrusted.stderr.startsWith(`Error: cannot reach the devtool service at ${url}: its TLS certificate is signed by a CA this machine does not trust`),
    );
    assert.ok(untrusted.stderr.endsWith('set DEVTOOL_CA_CERT=<file>\n'), untrusted.stderr);
    assert.equal(untrusted.stderr.split('\n').length, 2, 'one line');
    // The fingerprint the user compares is the one of the CA file they are given (the front door
    // signs with its root, so the chain it presents ends there, not at an intermediate of Caddy's).
    const caFingerprint = new X509Certificate(readFileSync(svc.caFile)).fingerprint256;
    assert.ok(untrusted.stderr.includes(`has the SHA-256 fingerprint ${caFingerprint};`), `${untrusted.stderr}\nwanted ${caFingerprint}`);
    const used = devtool(sb, ['context', 'use', url, '--token', token], trustingCa());
    assert.equal(used.code, 0, used.stderr);
    assert.equal(used.stdout, `Using context ${url} as ${user}: namespace "${user}-devtool" @ ${url}\n`);
    assert.equal(storedContexts(sb).contexts[url]?.certificate, svc.caPem, 'the CA the service announced is stored with the context');

    // Stored secrets on their page: names listed, the value never shown, but there for deploy.
    await visit(page, `${url}/account/secrets`);
    await submit(
      page,
      async () => {
        await page.fill('#set-secret input[name=name]', 'DB_PASSWORD');
        await page.fill('#set-secret input[name=value]', 'value-from-the-page');
        await page.click('#set-secret button');
      },
      () => page.waitForSelector('tr[data-secret="DB_PASSWORD"]'),
    );
    assert.equal(await page.locator('tr[data-secret="DB_PASSWORD"]').count(), 1);
    assert.equal((await page.content()).includes('value-from-the-page'), false);
    assert.deepEqual((await new ServiceClient({ url, token, ca: svc.caPem }).call('secretValues')).values, { DB_PASSWORD: 'value-from-the-page' });
    await submit(
      page,
      () => page.click('tr[data-secret="DB_PASSWORD"] button'),
      () => page.waitForSelector('tr[data-secret]', { state: 'detached' }),
    );
    assert.equal(await page.locator('tr[data-secret]').count(), 0);

    await visit(page, `${url}/account/tokens`);
    assert.equal(await page.locator('#new-token').count(), 0, 'the token is shown once');
    await submit(
      page,
      () => page.click('tr:has-text("from the e2e test") button'),
      () => page.waitForSelector('tr:has-text("from the e2e test")', { state: 'detached' }),
    );
    assert.equal(await page.locator('tr:has-text("from the e2e test")').count(), 0);

    // From here on without DEVTOOL_CA_CERT: the CLI trusts the service through the CA it stored.
    const refused = devtool(sb, ['context', 'use', url, '--token', token]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, `Error: token revoked or expired: log in again with devtool context use ${url}\n`);
    // The stored token, revoked: in CI that is one line, never a login waiting for a person.
    const inCi = devtool(sb, ['context', 'use', url], { CI: 'true' });
    assert.equal(inCi.code, 1);
    assert.match(inCi.stderr, /^Error: the token stored for \S+ was refused \(token revoked or expired[^\n]*\), and devtool never starts a login in CI/);
    assert.equal(inCi.stderr.split('\n').length, 2, 'one line');
    await context.close();
  });

  test('browser login: the CLI prints the address, Chromium signs up and consents, the token is stored 0600', async () => {
    const user = `cli${run}`;
    const url = svc.url;
    const sb = createSandbox();
    // A terminal and a desktop: the CLI takes the browser way (it cannot open one here; it prints the address).
    const cli = runInPty(['context', 'use', url], { cwd: sb.home, env: { ...sb.env, ...trustingCa(), DISPLAY: ':99', BROWSER: 'true' } });
    await cli.waitFor(/go to:\s+https:\S+\/auth\/authorize\?\S+/, 30_000);
    const address = /go to:\s+(https:\S+\/auth\/authorize\?\S+)/.exec(cli.output())![1]!;
    assert.ok(address.startsWith(`${url}/auth/authorize?`), `the service's public address: ${address}`);
    const redirect = new URL(address).searchParams.get('redirect_uri')!;
    assert.match(redirect, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.equal(new URL(address).searchParams.get('code_challenge_method'), 'S256');

    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await visit(page, address);
    await signUp(page, user, () => page.waitForSelector('#consent'));
    await svc.adoptUser(user);
    assert.match((await page.textContent('body'))!, new RegExp(`asks to use your account ${user}`));
    await submit(
      page,
      () => page.click('#allow'),
      () => page.waitForURL(`${url}/auth/done?outcome=signed-in`),
    );
    assert.match((await page.textContent('#signed-in'))!, /The devtool CLI is signed in/);

    assert.equal(await cli.exit(30_000), 0, cli.output());
    assert.match(cli.output(), new RegExp(`Using context ${url.replace(/[.]/g, '\\.')} as ${user}: namespace "${user}-devtool"`));
    const file = join(sb.devtoolHome, 'contexts.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = storedContexts(sb).contexts[url]!;
    assert.equal(stored.userId, user);
    assert.match(stored.token ?? '', /^dvt_/);
    assert.equal(cli.output().includes(stored.token!), false, 'the token is never printed');
    // The stored token works without DEVTOOL_CA_CERT (the stored CA), and is listed on the tokens page, named after the machine.
    const again = devtool(sb, ['context', 'use', url]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, `Using context ${url} as ${user}: namespace "${user}-devtool" @ ${url}\n`);
    await visit(page, `${url}/account/tokens`);
    assert.match((await page.textContent('table'))!, /devtool CLI on /);
    await context.close();
  });

  test('device login with BROWSER=none: the code the CLI prints is approved in Chromium; the token is stored', async () => {
    const user = `dev${run}`;
    const url = svc.url;
    const sb = createSandbox();
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await visit(page, `${url}/login`);
    await signUp(page, user, () => page.waitForURL(`${url}/`));
    await svc.adoptUser(user);

    // A terminal and a desktop, but BROWSER=none: the device code.
    const cli = runInPty(['context', 'use', url], { cwd: sb.home, env: { ...sb.env, ...trustingCa(), BROWSER: 'none', DISPLAY: ':99' } });
    await cli.waitFor(/enter the code [A-Z]{4}-[A-Z]{4}/, 30_000);
    const code = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(cli.output())![1]!;
    assert.match(
      cli.output(),
      new RegExp(
        `No browser here \\(BROWSER=none\\): signing in with a device code\\.\\r?\\nTo sign in, open ${url.replace(/[.]/g, '\\.')}/device on any device`,
      ),
    );
    await visit(page, `${url}/device`);
    await submit(
      page,
      async () => {
        await page.fill('#device input[name=code]', code.toLowerCase());
        await page.click('#allow');
      },
      () => page.waitForSelector('#signed-in'),
    );
    assert.match((await page.textContent('#signed-in'))!, /is signed in/);
    assert.equal(await cli.exit(30_000), 0, cli.output());
    assert.match(cli.output(), new RegExp(`Using context .* as ${user}: namespace "${user}-devtool"`));
    // The one namespace named is the user's own, once logged in: none is guessed before.
    assert.deepEqual(cli.output().match(/namespace "[^"]*"/g), [`namespace "${user}-devtool"`], cli.output());
    assert.equal(statSync(join(sb.devtoolHome, 'contexts.json')).mode & 0o777, 0o600);
    const stored = storedContexts(sb).contexts[url];
    assert.match(stored?.token ?? '', /^dvt_/);
    assert.deepEqual(
      await new ServiceClient({ url, token: stored!.token!, ca: svc.caPem }).call('me').then((m) => m.name),
      user,
      'the stored token is this user’s',
    );
    await context.close();
  });
});

describe('a service behind a private CA it presents (a local service program and HTTPS front)', { timeout: 300_000 }, () => {
  before(async () => {
    const { kubeconfigPath } = await ensureCluster();
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: serviceNs, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
    makeCa();
    kubeEnv = { KUBECONFIG: kubeconfigPath, POD_NAMESPACE: serviceNs, DEVTOOL_OBJECT_LABELS: `${E2E_NAMESPACE_LABEL}=true` };
    // Plain http on loopback behind the HTTPS front below; it announces the front's CA.
    service = await startService({ ...kubeEnv, DEVTOOL_CA_FILE: tls.caFile });
  });

  after(async () => {
    await service?.stop();
    await core?.deleteNamespace({ name: serviceNs }).catch(() => {});
  });

  test('behind a private CA: one line with its fingerprint; DEVTOOL_CA_CERT trusts it; the announced CA is stored for later calls', async () => {
    const user = `ca${run}`;
    const made = createUser(kubeEnv, user);
    assert.equal(made.status, 0, made.stderr);
    const front = await httpsFront(service.url);
    try {
      const sb = createSandbox();
      const untrusted = await devtoolAsync(sb, ['context', 'use', front.url, '--token', made.token]);
      assert.equal(untrusted.code, 1);
      assert.equal(
        untrusted.stderr,
        `Error: cannot reach the devtool service at ${front.url}: its TLS certificate is signed by a CA this machine does not trust ` +
          `(SELF_SIGNED_CERT_IN_CHAIN); its CA "devtool login e2e CA" has the SHA-256 fingerprint ${tls.fingerprint}; ` +
          'if that is your service, save its CA certificate (PEM) to a file and set DEVTOOL_CA_CERT=<file>\n',
      );
      const trusted = await devtoolAsync(sb, ['context', 'use', front.url, '--token', made.token], { DEVTOOL_CA_CERT: tls.caFile });
      assert.equal(trusted.code, 0, trusted.stderr);
      const stored = JSON.parse(readFileSync(join(sb.devtoolHome, 'contexts.json'), 'utf8')) as { contexts: Record<string, { certificate?: string }> };
      assert.equal(stored.contexts[front.url]?.certificate, readFileSync(tls.caFile, 'utf8'));
      // Later calls of that context trust the stored CA without DEVTOOL_CA_CERT: the stored token is checked over TLS.
      const later = await devtoolAsync(sb, ['context', 'use', front.url]);
      assert.equal(later.code, 0, later.stderr);
      assert.equal(later.stdout, `Using context ${front.url} as ${user}: namespace "${user}-devtool" @ ${front.url}\n`, 'the stored token, no login');
    } finally {
      front.server.close();
    }
  });
});
