/**
 * Accounts and login on a real devtool service (the built program, `serve`, its records in the
 * local cluster) driven through real Chromium: sign up, sign in, a token made on the tokens page
 * and used from the CLI, revoked there and refused; the CLI's browser login (loopback + PKCE) and
 * its device-code login, each ending with the API token stored 0600.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { BrowserContext, Page } from 'playwright-core';
import { ensureCluster } from '../../cluster/test-cluster.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { E2E_NAMESPACE_LABEL } from './cluster.ts';
import { runInPty } from './pty.ts';
import { type RunningService, startService } from './service.ts';

const run = randomBytes(3).toString('hex');
const serviceNs = `e2e-login-${run}`;
const PASSWORD = 'correct horse battery';
let core: k8s.CoreV1Api;
let service: RunningService;
let chromium: TestBrowser;

const devtool = (sb: Sandbox, args: string[], env: Record<string, string> = {}) => runDevtool(args, { env: { ...sb.env, ...env } });
const storedContexts = (sb: Sandbox) =>
  JSON.parse(readFileSync(join(sb.devtoolHome, 'contexts.json'), 'utf8')) as { current: string; contexts: Record<string, { token?: string; userId?: string }> };

async function signUp(page: Page, name: string): Promise<void> {
  await page.fill('#signup input[name=name]', name);
  await page.fill('#signup input[name=password]', PASSWORD);
  await page.fill('#signup input[name=password2]', PASSWORD);
  await page.click('#signup button');
}

async function signIn(page: Page, name: string, password = PASSWORD): Promise<void> {
  await page.fill('#signin input[name=name]', name);
  await page.fill('#signin input[name=password]', password);
  await page.click('#signin button');
}

describe('accounts and login through the browser', { timeout: 300_000 }, () => {
  before(async () => {
    const { kubeconfigPath } = await ensureCluster();
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: serviceNs, labels: { [E2E_NAMESPACE_LABEL]: 'true' } } } });
    // Plain http on loopback: the session cookie is not Secure there (sessions.ts).
    service = await startService({ KUBECONFIG: kubeconfigPath, POD_NAMESPACE: serviceNs, DEVTOOL_OBJECT_LABELS: `${E2E_NAMESPACE_LABEL}=true` });
    chromium = await launchBrowser();
  });

  after(async () => {
    await chromium?.close();
    await service?.stop();
    if (!core) return;
    for (const ns of (await core.listNamespace()).items) {
      const name = ns.metadata!.name!;
      if (name.includes(run)) await core.deleteNamespace({ name }).catch(() => {});
    }
  });

  test('sign up, sign in, create a token on the page, use it from the CLI, revoke it on the page: the CLI is refused in one line', async () => {
    const user = `web${run}`;
    const context: BrowserContext = await chromium.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service.url}/account/tokens`);
    assert.match(page.url(), /\/login\?next=%2Faccount%2Ftokens$/);
    await signUp(page, user);
    await page.waitForURL(`${service.url}/account/tokens`);
    const ns = await core.readNamespace({ name: `${user}-devtool` });
    assert.equal(ns.metadata?.labels?.['devtool.dev/owner'], user, 'sign-up made the personal namespace');

    await page.click('nav button');
    await page.waitForURL(/\/login$/);
    await signIn(page, user, 'not the password');
    assert.equal(await page.textContent('#error'), 'Wrong user name or password.');
    await signIn(page, user);
    await page.waitForURL(`${service.url}/account/tokens`);

    await page.fill('#create-token input[name=name]', 'from the e2e test');
    await page.click('#create-token button');
    const token = (await page.textContent('#new-token'))!.trim();
    assert.match(token, /^dvt_[A-Za-z0-9_-]{43}$/);

    const sb = createSandbox();
    const used = devtool(sb, ['context', 'use', service.url, '--token', token]);
    assert.equal(used.code, 0, used.stderr);
    assert.equal(used.stdout, `Using context ${service.url} as ${user}: namespace "${user}-devtool" @ ${service.url}\n`);

    await page.goto(`${service.url}/account/tokens`);
    assert.equal(await page.locator('#new-token').count(), 0, 'the token is shown once');
    await page.click('tr:has-text("from the e2e test") button');
    await page.waitForURL(`${service.url}/account/tokens`);
    assert.equal(await page.locator('tr:has-text("from the e2e test")').count(), 0);

    const refused = devtool(sb, ['context', 'use', service.url, '--token', token]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, `Error: token revoked or expired: log in again with devtool context use <service url>\n`);
    // The stored token, revoked: in CI that is one line, never a login waiting for a person.
    const inCi = devtool(sb, ['context', 'use', service.url], { CI: 'true' });
    assert.equal(inCi.code, 1);
    assert.match(
      inCi.stderr,
      /^Error: cannot log in to \S+: the token stored for \S+ was refused \(token revoked or expired[^\n]*\), and devtool never starts a login in CI/,
    );
    assert.equal(inCi.stderr.split('\n').length, 2, 'one line');
    await context.close();
  });

  test('browser login: the CLI prints the address, Chromium signs in and consents, the token is stored 0600', async () => {
    const user = `cli${run}`;
    const sb = createSandbox();
    // A terminal and a desktop: the CLI takes the browser way (it cannot open one here; it prints the address).
    const cli = runInPty(['context', 'use', service.url], { cwd: sb.home, env: { ...sb.env, DISPLAY: ':99', BROWSER: 'true' } });
    await cli.waitFor(/go to:\s+http:\S+\/auth\/authorize\?\S+/, 30_000);
    const address = /go to:\s+(http:\S+\/auth\/authorize\?\S+)/.exec(cli.output())![1]!;
    const redirect = new URL(address).searchParams.get('redirect_uri')!;
    assert.match(redirect, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.equal(new URL(address).searchParams.get('code_challenge_method'), 'S256');

    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await page.goto(address);
    await signUp(page, user);
    await page.waitForSelector('#consent');
    assert.match((await page.textContent('body'))!, new RegExp(`asks to use your account ${user}`));
    await page.click('#allow');
    await page.waitForURL(`${service.url}/auth/done?outcome=signed-in`);
    assert.match((await page.textContent('#signed-in'))!, /The devtool CLI is signed in/);

    assert.equal(await cli.exit(30_000), 0, cli.output());
    assert.match(cli.output(), new RegExp(`Using context ${service.url.replace(/[.]/g, '\\.')} as ${user}: namespace "${user}-devtool"`));
    const file = join(sb.devtoolHome, 'contexts.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = storedContexts(sb).contexts[service.url]!;
    assert.equal(stored.userId, user);
    assert.match(stored.token ?? '', /^dvt_/);
    assert.equal(cli.output().includes(stored.token!), false, 'the token is never printed');
    // The token is listed on the tokens page, named after the machine.
    await page.goto(`${service.url}/account/tokens`);
    assert.match((await page.textContent('table'))!, /devtool CLI on /);
    await context.close();
  });

  test('device login with BROWSER=none: the code the CLI prints is approved in Chromium; the token is stored', async () => {
    const user = `dev${run}`;
    const sb = createSandbox();
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service.url}/login`);
    await signUp(page, user);
    await page.waitForURL(`${service.url}/account/tokens`);

    // A terminal and a desktop, but BROWSER=none: the device code.
    const cli = runInPty(['context', 'use', service.url], { cwd: sb.home, env: { ...sb.env, BROWSER: 'none', DISPLAY: ':99' } });
    await cli.waitFor(/enter the code [A-Z]{4}-[A-Z]{4}/, 30_000);
    const code = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(cli.output())![1]!;
    assert.match(cli.output(), /No browser here \(BROWSER=none\): signing in with a device code\.\r?\nTo sign in, open http:\S+\/device on any device/);
    await page.goto(`${service.url}/device`);
    await page.fill('#device input[name=code]', code.toLowerCase());
    await page.click('#allow');
    assert.match((await page.textContent('#signed-in'))!, /is signed in/);
    assert.equal(await cli.exit(30_000), 0, cli.output());
    assert.match(cli.output(), new RegExp(`Using context .* as ${user}: namespace "${user}-devtool"`));
    assert.equal(statSync(join(sb.devtoolHome, 'contexts.json')).mode & 0o777, 0o600);
    assert.match(storedContexts(sb).contexts[service.url]?.token ?? '', /^dvt_/);
    await context.close();
  });
});
