/**
 * The dashboard's logs and pipeline run pages on the devtool service its chart installed
 * (installed-service.ts), in headless Chromium as a user of an API token (`Authorization: Bearer`):
 * a Deployment printing a line every 2 s shows its last lines, a new line appears without a reload
 * (its delay measured from the line's own timestamp in the container's log), and a pod deleted is
 * replaced by one whose lines follow; a pipeline run printing lines over 16 s shows them on its page
 * before it ends, then its status changes to deployed, there and in the runs list of the namespace
 * page open beside it. A second, plain user gets the namespace's 404
 * line for both pages. axe-core finds no serious or critical violation on either, neither scrolls
 * sideways at 360 px. Screenshots go to docs/images/.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, visit, type TestBrowser } from './browser.ts';
import { createSandbox, repoRoot, runDevtool, type Sandbox } from './cli.ts';
import { REGISTRY, runningPod } from './cluster.ts';
import { axeViolations, screenshot, scrollsSideways } from './dashboard-browser.ts';
import { type InstalledService, installedService } from './installed-service.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const owner = `dloga${run}`;
const other = `dlogb${run}`;
const NS = `${owner}-devtool`;
const LOGS_PATH = `/namespaces/${NS}/logs/deployments/dlogger`;
const RUN_PATH = `/namespaces/${NS}/pipelines/dlog-run`;

let svc: InstalledService;
let chromium: TestBrowser;
let ownerContext: BrowserContext;
let otherContext: BrowserContext;
let ownerToken: string;
let sb: Sandbox;
const csp: string[] = [];

/** A browser context sending `token` as the user's API token on every request (the event streams too). */
const asUser = (token: string) =>
  chromium.browser.newContext({ viewport: { width: 1000, height: 700 }, extraHTTPHeaders: { authorization: `Bearer ${token}` } });

/** Records in the page when each appended log line arrives (Date.now() of the browser, the same clock as the cluster's here). */
async function recordArrivals(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: { text: string; at: number }[] = [];
    (globalThis as unknown as { arrivals: typeof seen }).arrivals = seen;
    const log = document.getElementById('log')!;
    new MutationObserver((changes) => {
      // Appended lines only: the stream's first event puts the whole log in place again (nodes removed too).
      for (const c of changes)
        if (c.removedNodes.length === 0) for (const n of c.addedNodes) if (n.textContent) seen.push({ text: n.textContent, at: Date.now() });
    }).observe(log, { childList: true });
  });
}

const arrivals = (page: Page) => page.evaluate(() => (globalThis as unknown as { arrivals: { text: string; at: number }[] }).arrivals);
const waitLive = (page: Page) => page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Live', undefined, { timeout: 30_000 });

describe("the dashboard's logs and pipeline pages", () => {
  before(async () => {
    svc = await installedService();
    const git = spawnSync('bash', [join(repoRoot, 'scripts/git-server.sh'), 'up'], { encoding: 'utf8', timeout: 600_000 });
    assert.equal(git.status, 0, git.stderr);
    ownerToken = await svc.createUser(owner);
    chromium = await launchBrowser({ caPem: svc.caPem });
    ownerContext = await asUser(ownerToken);
    otherContext = await asUser(await svc.createUser(other));
    sb = createSandbox();
    const use = runDevtool(['context', 'use', svc.url, '--token', ownerToken], { env: { ...sb.env, DEVTOOL_CA_CERT: svc.caFile }, timeoutMs: 30_000 });
    assert.equal(use.code, 0, use.stderr);
  });

  after(async () => {
    await chromium?.close();
    await svc?.removeUsers();
  });

  test("dlog a Deployment's logs: its last lines, a new line without reload, a replaced pod's lines", { timeout: 300_000 }, async (t) => {
    const apps = svc.kc.makeApiClient(k8s.AppsV1Api);
    const labels = { app: 'dlogger' };
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'dlogger', labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'main',
                  image: `${REGISTRY}/debian:bookworm`,
                  command: ['bash', '-c', 'i=0; while true; do echo "dlog tick $i <b>"; i=$((i+1)); sleep 2; done'],
                },
              ],
            },
          },
        },
      },
    });
    await waitFor(
      'the dlogger pod running',
      () =>
        runningPod(svc.core, NS, 'app=dlogger').then(
          () => true,
          () => false,
        ),
      180_000,
    );
    const pod = await runningPod(svc.core, NS, 'app=dlogger');
    await new Promise((r) => setTimeout(r, 3000)); // a line or two printed

    const page = await ownerContext.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    await visit(page, `${svc.url}/namespaces/${NS}`);
    await page.click(`tr[data-workload="dlogger"] a[href="${LOGS_PATH}"]`);
    await page.waitForURL(`${svc.url}${LOGS_PATH}`);
    assert.equal(await page.textContent('h1'), 'Logs of dlogger');
    const first = (await page.textContent('#log')) ?? '';
    assert.match(first, new RegExp(`${pod}/main dlog tick 0 <b>`), 'the first paint has the last lines, escaped');
    await waitLive(page);
    await recordArrivals(page);
    const highest = async () => Math.max(...[...((await page.textContent('#log')) ?? '').matchAll(/dlog tick (\d+)/g)].map((m) => Number(m[1])));
    const before = await highest();
    await page.waitForFunction(
      (n) => [...(document.getElementById('log')?.textContent ?? '').matchAll(/dlog tick (\d+)/g)].some((m) => Number(m[1]) > n + 1),
      before,
      {
        timeout: 30_000,
      },
    );
    // The delay: the line's timestamp in the container's log (the kubelet's) to its arrival on the page.
    const stamped = await svc.core.readNamespacedPodLog({ name: pod, namespace: NS, container: 'main', timestamps: true });
    const delays: number[] = [];
    for (const a of await arrivals(page)) {
      const n = /dlog tick (\d+)/.exec(a.text)?.[1];
      const line = n && stamped.split('\n').find((l) => l.endsWith(` dlog tick ${n} <b>`));
      if (line) delays.push(a.at - Date.parse(line.slice(0, line.indexOf(' '))));
    }
    assert.ok(delays.length > 0, 'new lines arrived on the open page');
    t.diagnostic(`delay from a line printed to its appearance on the page: ${delays.map((d) => `${d} ms`).join(', ')}`);
    console.log(`dlog delay printed → on the page: ${delays.map((d) => `${d} ms`).join(', ')}`);
    assert.ok(Math.max(...delays) < 5000, `lines appear within 5 s (${delays.join(', ')})`);
    await screenshot(page, 'dashboard-logs.png');

    // The pod deleted: its replacement's lines follow on the same page.
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
    await svc.core.deleteNamespacedPod({ name: pod, namespace: NS });
    await page.waitForFunction(
      (old) => [...document.querySelectorAll('#log .src')].some((s) => s.textContent?.startsWith('dlogger-') && !s.textContent.startsWith(`${old}/`)),
      pod,
      { timeout: 120_000 },
    );
    assert.equal(navigations, 0, 'followed in place, not reloaded');
    assert.deepEqual(csp, [], 'no Content-Security-Policy refusal');
    await page.close();
  });

  test("dlog a pipeline run: its lines on the page before it ends, then its status, on its page and in the namespace page's list", {
    timeout: 400_000,
  }, async (t) => {
    const dir = join(sb.root, 'dlog-repo');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'devtool.yml'), ['deploy:', '  - for i in 1 2 3 4 5 6 7 8; do echo "dlog step $i"; sleep 2; done', ''].join('\n'));
    const made = spawnSync('bash', [join(repoRoot, 'scripts/git-server.sh'), 'repo', `dlog-${run}`, dir], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(made.status, 0, made.stderr);
    const repo = made.stdout.trim().split('\n').at(-1)!;
    const started = runDevtool(['pipeline', 'deploy', '--repository', repo, '--name', 'dlog-run', '--namespace', NS], {
      env: { ...sb.env, DEVTOOL_CA_CERT: svc.caFile, NODE_EXTRA_CA_CERTS: svc.caFile },
      timeoutMs: 60_000,
    });
    assert.equal(started.code, 0, `${started.stdout}\n${started.stderr}`);

    // The namespace page stays open beside the run's: its runs list follows the run in place.
    const nsPage = await ownerContext.newPage();
    await visit(nsPage, `${svc.url}/namespaces/${NS}`);
    assert.match((await nsPage.textContent('tr[data-run="dlog-run"]')) ?? '', /progressing/);
    await waitLive(nsPage);
    let nsNavigations = 0;
    nsPage.on('framenavigated', (f) => {
      if (f === nsPage.mainFrame()) nsNavigations++;
    });
    const page = await ownerContext.newPage();
    await visit(page, `${svc.url}/namespaces/${NS}`);
    await page.click(`tr[data-run="dlog-run"] a[href="${RUN_PATH}"]`);
    await page.waitForURL(`${svc.url}${RUN_PATH}`);
    assert.match((await page.textContent('#run [data-status]')) ?? '', /progressing/);
    await waitLive(page);
    await page.waitForFunction(() => document.getElementById('log')?.textContent?.includes('dlog step 1'), undefined, { timeout: 180_000 });
    const firstLineAt = Date.now();
    assert.match((await page.textContent('#run [data-status]')) ?? '', /progressing/, 'still running when its first line shows');
    await page.waitForFunction(() => document.getElementById('log')?.textContent?.includes('dlog step 3'), undefined, { timeout: 60_000 });
    await screenshot(page, 'dashboard-pipeline.png');
    await page.waitForFunction(() => /deployed/.test(document.querySelector('#run [data-status]')?.textContent ?? ''), undefined, { timeout: 180_000 });
    const endedAt = Date.now();
    assert.match((await page.textContent('#log')) ?? '', /dlog step 8/);
    assert.match((await page.textContent('#live-status')) ?? '', /Not live: the run ended: deployed/);
    t.diagnostic(`first line on the page ${endedAt - firstLineAt} ms before the status showed the end`);
    console.log(`dlog pipeline: first line on the page ${endedAt - firstLineAt} ms before its end showed`);
    assert.ok(endedAt - firstLineAt >= 8000, `the lines came while it ran (${endedAt - firstLineAt} ms before the end)`);
    await nsPage.waitForFunction(() => /deployed/.test(document.querySelector('tr[data-run="dlog-run"]')?.textContent ?? ''), undefined, { timeout: 30_000 });
    t.diagnostic(`the namespace page's runs list showed the end ${Date.now() - endedAt} ms after the run's page`);
    assert.equal(nsNavigations, 0, 'the runs list changed in place, not reloaded');
    await nsPage.close();
    await page.close();
  });

  test('dlog a second user gets the namespace 404 line for both pages, and their streams', async () => {
    const page = await otherContext.newPage();
    for (const path of [LOGS_PATH, `${LOGS_PATH}/events`, RUN_PATH, `${RUN_PATH}/events`]) {
      const answer = await visit(page, `${svc.url}${path}`);
      assert.equal(answer?.status(), 404, path);
      assert.equal(await page.textContent('#error'), `There is no namespace ${NS} that you can see.`, path);
      assert.doesNotMatch(await page.content(), /dlog (tick|step)/, 'no data');
    }
    await page.close();
  });

  test('dlog both pages: no serious or critical axe-core violation, no horizontal scroll at 360 px', async () => {
    const page = await ownerContext.newPage();
    for (const path of [LOGS_PATH, RUN_PATH]) {
      await visit(page, `${svc.url}${path}`);
      assert.deepEqual(await axeViolations(page), [], `axe on ${path}`);
      assert.equal(await scrollsSideways(page), false, `${path} scrolls sideways at 360 px`);
    }
    await page.close();
  });
});
