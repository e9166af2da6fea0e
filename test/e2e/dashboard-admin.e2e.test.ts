/**
 * The dashboard's admin page on the devtool service its chart installed (installed-service.ts), in
 * headless Chromium: an admin creates a user on the page and that user's first token works against
 * the API; makes it admin and takes it back. A plain user gets 403 at /admin and at its forms, even
 * with a POST forged with its own valid session and CSRF token, and cannot put another user's
 * namespace to sleep through the page. The owner sleeps and wakes its namespace with the buttons.
 * The admin page shows the session length the chart set (12h by service:up), which the session cookie
 * keeps; it passes axe-core with no serious or critical violation and has no horizontal scroll at 360
 * px; its screenshot goes to docs/images/dashboard-admin.png when asked.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, submit, visit, type TestBrowser } from './browser.ts';
import { axeViolations, screenshot, signUp } from './dashboard-browser.ts';
import { type InstalledService, installedService, serviceCall } from './installed-service.ts';

const run = randomBytes(3).toString('hex');
const admin = `dadma${run}`;
const plain = `dadmb${run}`;
const made = `dadmc${run}`;

let svc: InstalledService;
let chromium: TestBrowser;
let adminContext: BrowserContext;
let plainContext: BrowserContext;
let adminPage: Page;
let plainPage: Page;

/** Clicks the button and waits for the page the form's answer leads to. */
async function press(page: Page, selector: string, arrived: string): Promise<void> {
  await submit(
    page,
    () => page.click(selector),
    () => page.waitForURL(arrived),
  );
}

describe('the dashboard admin page of the installed service', () => {
  before(async () => {
    svc = await installedService();
    chromium = await launchBrowser({ caPem: svc.caPem });
    adminContext = await chromium.browser.newContext({ viewport: { width: 1000, height: 700 } });
    plainContext = await chromium.browser.newContext({ viewport: { width: 1000, height: 700 } });
    adminPage = await adminContext.newPage();
    plainPage = await plainContext.newPage();
    await signUp(svc, adminPage, admin);
    await signUp(svc, plainPage, plain);
    // The page's admin is made one by an operator's admin token, through the API.
    const root = await svc.createUser(`dadmr${run}`, true);
    const res = await serviceCall(svc.url, svc.caPem, root, 'PUT', `/api/v1/users/${admin}/admin`, { admin: true });
    assert.equal(res.status, 200, res.body);
  });

  after(async () => {
    await chromium?.close();
    await svc?.removeUsers();
  });

  test('dadm an admin creates a user whose token works, makes it admin and takes it back', async () => {
    const page = adminPage;
    await visit(page, `${svc.url}/admin`);
    assert.equal(await page.textContent('h1'), 'Admin');
    assert.equal(await page.getAttribute('nav a[href="/admin"]', 'aria-current'), 'page');
    assert.ok(await page.isVisible(`tr[data-user="${plain}"]`));
    assert.match((await page.textContent(`tr[data-user="${admin}"]`)) ?? '', /your own account/);
    await page.fill('#create-user input[name=name]', made);
    await submit(
      page,
      () => page.click('#create-user button'),
      () => page.waitForSelector('#new-token'),
    );
    await svc.adoptUser(made);
    const token = ((await page.textContent('#new-token')) ?? '').trim();
    assert.match((await page.textContent('#login-command')) ?? '', new RegExp(`devtool context use ${svc.url} --token ${token}`));
    const mine = await serviceCall(svc.url, svc.caPem, token, 'GET', '/api/v1/namespaces');
    assert.equal(mine.status, 200, mine.body);
    assert.match(mine.body, new RegExp(`"${made}-devtool"`));

    await visit(page, `${svc.url}/admin`);
    await press(page, `tr[data-user="${made}"] button:has-text("Make admin")`, `${svc.url}/admin`);
    assert.match((await page.textContent(`tr[data-user="${made}"] td[data-label=Admin]`)) ?? '', /admin/);
    const users = await serviceCall(svc.url, svc.caPem, token, 'GET', '/api/v1/users');
    assert.equal(users.status, 200, 'an admin now: it lists users');
    await press(page, `tr[data-user="${made}"] button:has-text("Take admin")`, `${svc.url}/admin`);
    assert.equal((await page.textContent(`tr[data-user="${made}"] td[data-label=Admin]`))?.trim(), 'no');
    assert.equal((await serviceCall(svc.url, svc.caPem, token, 'GET', '/api/v1/users')).status, 403);
  });

  test('dadm a plain user: 403 at /admin and its forms, even forged with its own session and CSRF token', async () => {
    const page = plainPage;
    await visit(page, `${svc.url}/`);
    assert.equal(await page.locator('nav a[href="/admin"]').count(), 0, 'no Admin link');
    const csrf = await page.getAttribute('#create-namespace input[name=csrf]', 'value');
    assert.ok(csrf);
    /**
     * What the plain user's own browser gets: a GET, or a form it did not get from the service,
     * posted from Home with its session cookie and the CSRF token it was given.
     */
    const send = async (path: string, form?: Record<string, string>): Promise<{ status: number; text: string }> => {
      if (!form) {
        const res = await visit(page, `${svc.url}${path}`);
        return { status: res?.status() ?? 0, text: (await res?.text()) ?? '' };
      }
      await visit(page, `${svc.url}/`);
      const [res] = await Promise.all([
        page.waitForNavigation(),
        page.evaluate(
          ([url, fields]) => {
            const f = document.createElement('form');
            f.method = 'post';
            f.action = url;
            for (const [name, value] of Object.entries(fields)) {
              const input = document.createElement('input');
              input.type = 'hidden';
              input.name = name;
              input.value = value;
              f.append(input);
            }
            document.body.append(f);
            f.submit();
          },
          [`${svc.url}${path}`, form] as const,
        ),
      ]);
      return { status: res?.status() ?? 0, text: (await res?.text()) ?? '' };
    };
    const answer = await send('/admin');
    assert.equal(answer.status, 403);
    assert.match(answer.text, /Only admins can use the admin page\./);
    const forged: [string, Record<string, string>][] = [
      ['/admin/users', { name: `dadmx${run}`, admin: 'true' }],
      [`/admin/users/${plain}/admin`, { admin: 'true' }],
      [`/admin/users/${admin}/disable`, {}],
      [`/admin/namespaces/${admin}-devtool/sleep`, {}],
    ];
    for (const [path, form] of forged) {
      const res = await send(path, { csrf: csrf ?? '', ...form });
      assert.equal(res.status, 403, path);
      assert.match(res.text, /Only admins can use the admin page\./, path);
    }
    const other = await send(`/namespaces/${admin}-devtool/sleep`, { csrf: csrf ?? '' });
    assert.equal(other.status, 403);
    assert.match(other.text, new RegExp(`only its owner \\(${admin}\\) or an admin can put it to sleep`));
    const list = await serviceCall(svc.url, svc.caPem, await svc.createUser(`dadms${run}`, true), 'GET', '/api/v1/users');
    const users = JSON.parse(list.body) as { users: { name: string; admin: boolean; disabled: boolean }[] };
    assert.equal(
      users.users.find((u) => u.name === `dadmx${run}`),
      undefined,
      'no user made',
    );
    assert.equal(users.users.find((u) => u.name === plain)?.admin, false);
    assert.equal(users.users.find((u) => u.name === admin)?.disabled, false);
    await visit(adminPage, `${svc.url}/`);
    assert.doesNotMatch((await adminPage.textContent(`tr[data-namespace="${admin}-devtool"]`)) ?? '', /Sleeping/);
  });

  test('dadm the owner sleeps and wakes its namespace with the buttons: Sleeping, then Active', async () => {
    const page = plainPage;
    const ns = `${plain}-devtool`;
    await visit(page, `${svc.url}/namespaces/${ns}`);
    await press(page, 'button:has-text("Sleep")', `${svc.url}/namespaces/${ns}`);
    assert.match((await page.textContent('#ns-status')) ?? '', new RegExp(`^Sleeping since .* \\(by ${plain}\\)$`));
    await press(page, 'button:has-text("Wake")', `${svc.url}/namespaces/${ns}`);
    // Waking until the service sees its workloads available (none here): Active within seconds.
    const deadline = Date.now() + 60_000;
    let status = (await page.textContent('#ns-status')) ?? '';
    while (status !== 'Active' && Date.now() < deadline) {
      assert.match(status, /^Waking since /);
      await new Promise((r) => setTimeout(r, 2000));
      await visit(page, `${svc.url}/namespaces/${ns}`);
      status = (await page.textContent('#ns-status')) ?? '';
    }
    assert.equal(status, 'Active');
  });

  test('dadm the admin page: the session length the chart set, no serious or critical axe-core violation, no horizontal scroll at 360 px', async () => {
    const page = adminPage;
    await visit(page, `${svc.url}/admin`);
    // service:up sets service.sessionLength=12h: the settings say so, and the sign-in's cookie lasts that long.
    const settings = await page.$$eval('#settings tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    assert.deepEqual(
      settings.find(([name]) => name === 'Browser session length'),
      ['Browser session length', '12h'],
    );
    const session = (await adminContext.cookies()).find((c) => c.name === '__Host-devtool_session');
    assert.ok(session, 'the session cookie');
    const hours = (session.expires * 1000 - Date.now()) / 3600_000;
    assert.ok(hours > 11.9 && hours <= 12, `the session cookie ends in ${hours.toFixed(3)} h`);
    await screenshot(page, 'dashboard-admin.png');
    assert.deepEqual(await axeViolations(page), []);
    await page.setViewportSize({ width: 360, height: 800 });
    const wider = await page.evaluate(() =>
      [...document.querySelectorAll('main td')]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth)
        .map((e) => `${e.closest('table')?.id}: ${e.textContent?.slice(0, 60)}`),
    );
    const wide = await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
    assert.equal(wide, false, `/admin scrolls sideways at 360 px: ${wider.slice(0, 5).join(', ')}`);
    assert.deepEqual(await axeViolations(page), [], 'axe at 360 px');
  });
});
