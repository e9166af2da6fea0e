/**
 * The dashboard on the devtool service its chart installed (installed-service.ts), in headless
 * Chromium trusting the front door's CA: a user signs up, sees its namespaces on Home, creates and
 * deletes one with the forms, deploys a Compose app with the CLI, opens its namespace page and sees
 * a pod deleted in the cluster replaced, and a dev session's state, on the open page without a reload; with Home and a
 * namespace page open, a namespace made and put to sleep with the CLI shows on both without a reload. A second user sees none
 * of the first's namespaces, on Home or by URL. Every page passes axe-core with no serious or
 * critical violation and has no horizontal scroll at 360 px. Screenshots go to docs/images/.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { BrowserContext, Page } from 'playwright-core';
import { DEV_SESSION_ANNOTATION } from '../../api/dev-session.ts';
import { launchBrowser, submit, visit, type TestBrowser } from './browser.ts';
import { createSandbox, runDevtool, type Sandbox } from './cli.ts';
import { REGISTRY, runningPod } from './cluster.ts';
import { axeViolations, screenshot, scrollsSideways, signUp, tokenOnPage } from './dashboard-browser.ts';
import { type InstalledService, installedService } from './installed-service.ts';

const run = randomBytes(3).toString('hex');
const owner = `dasha${run}`;
const other = `dashb${run}`;
const personal = `${owner}-devtool`;
const extra = `dash${run}-extra`;
/** The live updates' own namespace (made and put to sleep with the CLI). */
const live = `live${run}-sleepy`;

let svc: InstalledService;
let chromium: TestBrowser;
let ownerContext: BrowserContext;
let otherContext: BrowserContext;
let ownerPage: Page;
const csp: string[] = [];
/** Why the page's event stream was cut, each time (Chromium's error text). */
const streamFailures: string[] = [];

/**
 * `step` again (up to 3 times) when Chromium cut its request with ERR_NETWORK_CHANGED: it does so
 * whenever a network interface comes or goes, and every pod started or ended on this machine adds
 * or removes one (browser.ts `visit`). `submit` retries the form's own request; a cut in the page's
 * other requests around it ends up here.
 */
async function again(step: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (attempt >= 3 || !/ERR_NETWORK_CHANGED/.test(String(err))) throw err;
    }
  }
}

const devtool = (sb: Sandbox, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}) =>
  runDevtool(args, { env: { ...sb.env, DEVTOOL_CA_CERT: svc.caFile }, ...opts });

let cli: Sandbox | undefined;
/** The owner's CLI, logged in with a token made on the tokens page (once). */
async function ownerCli(): Promise<Sandbox> {
  if (cli) return cli;
  let token = '';
  await again(async () => {
    token = await tokenOnPage(svc.url, ownerPage, 'cli');
  });
  const sb = createSandbox();
  assert.equal(devtool(sb, ['context', 'use', svc.url, '--token', token]).code, 0);
  cli = sb;
  return sb;
}

const waitLive = (page: Page) => page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Live', undefined, { timeout: 15_000 });

describe('the dashboard of the installed service', () => {
  before(async () => {
    svc = await installedService();
    chromium = await launchBrowser({ caPem: svc.caPem });
    ownerContext = await chromium.browser.newContext({ viewport: { width: 1000, height: 700 } });
    otherContext = await chromium.browser.newContext({ viewport: { width: 1000, height: 700 } });
    ownerPage = await ownerContext.newPage();
    ownerPage.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    ownerPage.on('requestfailed', (r) => {
      if (r.url().endsWith('/events')) streamFailures.push(r.failure()?.errorText ?? 'unknown');
    });
    await signUp(svc, ownerPage, owner);
  });

  after(async () => {
    await chromium?.close();
    await svc?.removeUsers();
  });

  test('Home lists the personal namespace; the forms create and delete one', async () => {
    const page = ownerPage;
    assert.equal(await page.textContent('h1'), 'Home');
    assert.match((await page.textContent(`tr[data-namespace="${personal}"]`)) ?? '', /Active/);
    await submit(
      page,
      async () => {
        await page.fill('#create-namespace input[name=name]', extra);
        await page.click('#create-namespace button');
      },
      () => page.waitForSelector(`tr[data-namespace="${extra}"]`),
    );
    await svc.markForCleanup(extra);
    await submit(
      page,
      () => page.click(`tr[data-namespace="${extra}"] form[action$="/delete"] button`),
      () => page.waitForFunction((n) => !document.querySelector(`tr[data-namespace="${n}"]`)?.textContent?.includes('Active'), extra),
    );
    assert.equal(await page.$(`tr[data-namespace="${personal}"] form[action$="/delete"]`), null, 'no delete of the personal namespace');
  });

  test('a deployed Compose app on its namespace page; a pod deleted in the cluster is replaced on the open page without reload', {
    timeout: 300_000,
  }, async (t) => {
    const page = ownerPage;
    const sb = await ownerCli();
    const app = join(sb.root, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'compose.yaml'), ['services:', '  web:', `    image: ${REGISTRY}/nginx:1`, '    ports: ["8080:80"]', ''].join('\n'));
    const deployed = devtool(sb, ['deploy', '--name', 'dashweb', '--wait', '--timeout', '3m'], { cwd: app, timeoutMs: 240_000 });
    assert.equal(deployed.code, 0, deployed.stderr);

    await visit(page, `${svc.url}/namespaces/${personal}`);
    assert.equal(await page.textContent('h1'), `Namespace ${personal}`);
    assert.match((await page.textContent('tr[data-environment="dashweb"]')) ?? '', /Compose\s*deployed/);
    assert.match((await page.textContent('tr[data-environment="dashweb"]')) ?? '', /https:\/\/\S+/, 'its endpoint as a link');
    await waitLive(page);
    const pod = await runningPod(svc.core, personal, 'devtool.dev/environment=dashweb');
    assert.ok(await page.$(`li[data-pod="${pod}"]`), 'the running pod is listed');

    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
    await svc.core.deleteNamespacedPod({ name: pod, namespace: personal });
    await page.waitForFunction(
      (old) => {
        const pods = [...document.querySelectorAll('li[data-pod]')];
        return !pods.some((p) => p.getAttribute('data-pod') === old) && pods.some((p) => p.textContent?.includes('Running, ready'));
      },
      pod,
      { timeout: 120_000 },
    );
    // The session state `up` publishes on its dev Deployment (written here as up writes it): shown live too.
    const now = new Date().toISOString();
    const state = {
      ...{ format: 1, user: owner, version: '0.1.0', startedAt: now, heartbeatAt: now },
      ...{ sync: { state: 'syncing', toReceive: 0, toSend: 3 }, conflicts: { total: 1, latest: ['index.sync-conflict.html'] } },
      ...{ forwards: [{ local: 8080, remote: 'web:80' }], connection: { state: 'connected' } },
    };
    await svc.kc
      .makeApiClient(k8s.AppsV1Api)
      .patchNamespacedDeployment(
        { name: 'web', namespace: personal, body: { metadata: { annotations: { [DEV_SESSION_ANNOTATION]: JSON.stringify(state) } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    await page.waitForSelector('tr[data-session="web"]', { timeout: 30_000 });
    assert.match(
      (await page.textContent('tr[data-session="web"]')) ?? '',
      /connected.*syncing: 0 to receive, 3 to send.*index\.sync-conflict\.html.*localhost:8080 → web:80/s,
    );
    assert.equal(navigations, 0, 'updated in place, not reloaded');
    // Chromium cuts the stream when a pod's veth comes or goes (ERR_NETWORK_CHANGED, in the diagnostics); it reconnects by itself.
    await waitLive(page);
    await screenshot(page, 'dashboard-namespace.png');
    t.diagnostic(`event stream cuts: ${streamFailures.length ? streamFailures.join(', ') : 'none'}`);
    assert.deepEqual(csp, [], 'no Content-Security-Policy refusal');
  });

  test('Home and a namespace page live: a namespace made with the CLI appears on Home; its sleep from the CLI shows on both without reload', async (t) => {
    const sb = await ownerCli();
    const home = ownerPage;
    await visit(home, `${svc.url}/`);
    await waitLive(home);
    let navigations = 0;
    home.on('framenavigated', (f) => {
      if (f === home.mainFrame()) navigations++;
    });
    const row = `tr[data-namespace="${live}"]`;
    const made = Date.now();
    const created = devtool(sb, ['namespace', 'create', live]);
    assert.equal(created.code, 0, created.stderr);
    await svc.markForCleanup(live);
    await home.waitForSelector(row, { timeout: 15_000 });
    const createdMs = Date.now() - made;
    assert.match((await home.textContent(row)) ?? '', /Active.*0 environments, 0\/0 pods ready/s);

    // Its page open beside Home, live too.
    const nsPage = await ownerContext.newPage();
    await visit(nsPage, `${svc.url}/namespaces/${live}`);
    await waitLive(nsPage);
    assert.equal(await nsPage.textContent('#ns-status'), 'Active');
    let nsNavigations = 0;
    nsPage.on('framenavigated', (f) => {
      if (f === nsPage.mainFrame()) nsNavigations++;
    });
    const slept = Date.now();
    const sleep = devtool(sb, ['namespace', 'sleep', live]);
    assert.equal(sleep.code, 0, sleep.stderr);
    const cliMs = Date.now() - slept;
    const sleeping = new RegExp(`^Sleeping since .* \\(by ${owner}\\)$`).source;
    await nsPage.waitForFunction((re) => new RegExp(re).test(document.getElementById('ns-status')?.textContent ?? ''), sleeping, { timeout: 15_000 });
    const pageMs = Date.now() - slept;
    assert.ok(await nsPage.isVisible(`#ns-actions button[aria-label="Wake ${live}"]`), 'its button turned to Wake in place');
    await home.waitForFunction((sel) => /Sleeping since/.test(document.querySelector(sel)?.textContent ?? ''), row, { timeout: 15_000 });
    const homeMs = Date.now() - slept;
    assert.equal(navigations + nsNavigations, 0, 'updated in place, not reloaded');
    assert.equal(await home.textContent('#live-status'), 'Live');
    t.diagnostic(`created to Home: ${createdMs} ms; sleep command ${cliMs} ms, to the namespace page ${pageMs} ms, to Home ${homeMs} ms`);
    await nsPage.close();
    assert.deepEqual(csp, [], 'no Content-Security-Policy refusal');
  });

  test('a second user sees none of the first user’s namespaces, on Home or by URL', async () => {
    const page = await otherContext.newPage();
    await signUp(svc, page, other);
    const home = (await page.content()) ?? '';
    assert.match(home, new RegExp(`data-namespace="${other}-devtool"`));
    assert.doesNotMatch(home, new RegExp(owner), "no trace of the first user's namespaces");
    const answer = await visit(page, `${svc.url}/namespaces/${personal}`);
    assert.equal(answer?.status(), 404);
    assert.equal(await page.textContent('#error'), `There is no namespace ${personal} that you can see.`);
    assert.doesNotMatch(await page.content(), /dashweb|data-pod/, 'no data');
    const events = await visit(page, `${svc.url}/namespaces/${personal}/events`);
    assert.equal(events?.status(), 404, 'nor its live stream');
    await page.close();
  });

  test('every page: no serious or critical axe-core violation, keyboard first to the skip link, no horizontal scroll at 360 px', async () => {
    const page = ownerPage;
    const pages = [
      ['/', 'dashboard-home.png'],
      [`/namespaces/${personal}`, undefined],
      ['/account/tokens', undefined],
      ['/account/secrets', undefined],
    ] as const;
    for (const [path, image] of pages) {
      await visit(page, `${svc.url}${path}`);
      if (image) await screenshot(page, image);
      assert.deepEqual(await axeViolations(page), [], `axe on ${path}`);
      // The keyboard: the first Tab reaches the skip link, the next the navigation's first entry.
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content', path);
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('href')), '/', path);
      assert.equal(await scrollsSideways(page), false, `${path} scrolls sideways at 360 px`);
    }
  });
});
