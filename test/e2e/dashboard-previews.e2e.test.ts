/**
 * A global preview's buttons on the dashboard, in headless Chromium, on the devtool service its
 * chart installed (installed-service.ts). One preview (nginx from a Compose file on the git server
 * inside the cluster, scripts/git-server.sh; one Deployment) is deployed once by its owner, an admin,
 * with a token made on the tokens page, and serves every step: a plain user sees it on Home and on
 * its page without a button, and the forms it forges with its own session and CSRF token are
 * refused with the rule's line while nothing changes; then the owner clicks Sleep (its Deployment at
 * zero, the page says Sleeping), Wake (the Deployment back), Redeploy (a new run with the recorded
 * repository, branch and variables, shown on the page) and Destroy (gone from the page and the
 * cluster). The preview's page passes axe-core with no serious or critical violation, has no
 * horizontal scroll at 360 px, and its screenshot is docs/images/dashboard-preview.png when asked.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, submit, type TestBrowser, visit } from './browser.ts';
import { repoRoot } from './cli.ts';
import { REGISTRY } from './cluster.ts';
import { axeViolations, screenshot, scrollsSideways, signUp, tokenOnPage } from './dashboard-browser.ts';
import { type InstalledService, installedService, serviceCall } from './installed-service.ts';
import { waitFor } from './wait.ts';

const run = randomBytes(3).toString('hex');
const owner = `dpvo${run}`;
const plain = `dpvp${run}`;
const preview = `dpv-${run}`;
const branch = `dpv-${run}`;
const PAGE_TOKEN = `dpv-page-${run}`;
const PIPELINE = `web-${run}`;

let svc: InstalledService;
let chromium: TestBrowser;
let ownerContext: BrowserContext;
let plainContext: BrowserContext;
let ownerPage: Page;
let plainPage: Page;
let ownerToken: string;
let repository: string;
let apps: k8s.AppsV1Api;
let batch: k8s.BatchV1Api;

interface PreviewState {
  status: string;
  deployedAt: string;
  commit?: string;
}

/** The preview as its owner's API token reads it. */
async function previewState(): Promise<PreviewState> {
  const res = await serviceCall(svc.url, svc.caPem, ownerToken, 'GET', `/api/v1/previews/${preview}`);
  assert.equal(res.status, 200, res.body);
  return JSON.parse(res.body) as PreviewState;
}

/** Until the preview's run has ended as deployed; fails at once on an error. */
async function deployed(what: string): Promise<PreviewState> {
  let last: PreviewState | undefined;
  await waitFor(
    what,
    async () => {
      last = await previewState();
      assert.notEqual(last.status, 'error', JSON.stringify(last));
      return last.status === 'deployed';
    },
    240_000,
  );
  return last!;
}

/** The preview's Deployment: its replicas asked for and ready. */
async function web(): Promise<{ replicas: number | undefined; ready: number }> {
  const d = await apps.readNamespacedDeployment({ name: 'web', namespace: preview });
  return { replicas: d.spec?.replicas, ready: d.status?.readyReplicas ?? 0 };
}

/** The runs' Jobs in the preview's namespace, by name. */
async function jobs(): Promise<k8s.V1Job[]> {
  return (await batch.listNamespacedJob({ namespace: preview, labelSelector: `devtool.dev/pipeline=${PIPELINE}` })).items;
}

/**
 * Clicks the preview's button on its page and waits for the page the form leads back to: a new load
 * of the same address, so the navigation is awaited from before the click, never the address.
 */
async function press(page: Page, action: 'sleep' | 'wake' | 'redeploy' | 'destroy'): Promise<void> {
  const button = `form[action="/previews/${preview}/${action}"] button`;
  if (!(await page.$(button))) assert.fail(`no ${action} button at ${page.url()}: ${(await page.textContent('main'))?.slice(0, 400)}`);
  let back: Promise<unknown> = Promise.resolve();
  await submit(
    page,
    async () => {
      back = page.waitForNavigation({ url: `${svc.url}/namespaces/${preview}` });
      back.catch(() => undefined);
      await page.click(button, { timeout: 10_000 }).catch(async (err: Error) => {
        // The section may have been replaced by a live update since the check above: say with what.
        const actions = await page.innerHTML('#ns-actions').catch(() => '(none)');
        const live = await page.textContent('#live-status').catch(() => '(none)');
        assert.fail(`${err.message.split('\n')[0]}; at ${page.url()}, live: ${live}; its actions now: ${actions}`);
      });
    },
    () => back,
  );
}

/** A form the plain user's browser posts from Home with its own session cookie and CSRF token, as a forger would. */
async function forge(page: Page, path: string, csrf: string): Promise<{ status: number; error: string }> {
  await visit(page, `${svc.url}/`);
  const [res] = await Promise.all([
    page.waitForNavigation(),
    page.evaluate(
      ([url, token]) => {
        const f = document.createElement('form');
        f.method = 'post';
        f.action = url;
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = 'csrf';
        input.value = token;
        f.append(input);
        document.body.append(f);
        f.submit();
      },
      [`${svc.url}${path}`, csrf] as const,
    ),
  ]);
  return { status: res?.status() ?? 0, error: ((await page.textContent('#error').catch(() => null)) ?? '').trim() };
}

describe('a preview on the dashboard of the installed service', () => {
  before(async () => {
    svc = await installedService();
    apps = svc.kc.makeApiClient(k8s.AppsV1Api);
    batch = svc.kc.makeApiClient(k8s.BatchV1Api);
    const git = spawnSync('bash', [join(repoRoot, 'scripts/git-server.sh'), 'up'], { encoding: 'utf8', timeout: 600_000 });
    assert.equal(git.status, 0, git.stderr);
    // nginx with a public port, on a branch of its own: the recorded branch must be the one redeployed.
    const dir = mkdtempSync(join(tmpdir(), 'devtool-dpv-'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(
      join(dir, 'src', 'compose.yaml'),
      ['services:', '  web:', '    image: ${REGISTRY}/nginx:1', '    ports: ["8080:80"]', '    environment:', '      PAGE_TOKEN: ${PAGE_TOKEN}', ''].join('\n'),
    );
    const made = spawnSync('bash', [join(repoRoot, 'scripts/git-server.sh'), 'repo', PIPELINE, join(dir, 'src'), '--branch', branch], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(made.status, 0, made.stderr);
    repository = made.stdout.trim().split('\n').at(-1)!;

    chromium = await launchBrowser({ caPem: svc.caPem });
    ownerContext = await chromium.browser.newContext({ viewport: { width: 1000, height: 700 } });
    plainContext = await chromium.browser.newContext({ viewport: { width: 1000, height: 700 } });
    ownerPage = await ownerContext.newPage();
    plainPage = await plainContext.newPage();
    await signUp(svc, ownerPage, owner);
    await signUp(svc, plainPage, plain);
    // Only an admin deploys a global preview: the owner is made one by an operator's admin token.
    const root = await svc.createUser(`dpvr${run}`, true);
    const admin = await serviceCall(svc.url, svc.caPem, root, 'PUT', `/api/v1/users/${owner}/admin`, { admin: true });
    assert.equal(admin.status, 200, admin.body);
    // The owner's token for the deploy (what `devtool preview deploy` sends), made on the tokens page.
    ownerToken = await tokenOnPage(svc.url, ownerPage, 'preview');
    const started = Date.now();
    const asked = await serviceCall(svc.url, svc.caPem, ownerToken, 'POST', '/api/v1/previews', {
      name: preview,
      scope: 'global',
      repository,
      branch,
      sourceUrl: `https://git.example.com/pulls/${run}`,
      variables: [`REGISTRY=${REGISTRY}`, `PAGE_TOKEN=${PAGE_TOKEN}`],
      timeoutSeconds: 240,
    });
    assert.equal(asked.status, 202, asked.body);
    await svc.markForCleanup(preview);
    await deployed('the preview deployed');
    console.log(`preview deployed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  after(async () => {
    await chromium?.close();
    await svc?.removeUsers();
  });

  test('dpv the owner sees the preview on Home and its page with the four buttons; axe, 360 px', async () => {
    const page = ownerPage;
    await visit(page, `${svc.url}/`);
    const row = `#namespaces tr[data-namespace="${preview}"]`;
    assert.match((await page.textContent(row)) ?? '', /global preview · source https:\/\/git\.example\.com\/pulls\//);
    for (const action of ['redeploy', 'sleep', 'destroy']) {
      assert.ok(await page.$(`${row} form[action="/previews/${preview}/${action}"] button`), `Home: ${action}`);
    }
    await visit(page, `${svc.url}/namespaces/${preview}`);
    assert.equal(await page.textContent('h1'), `Namespace ${preview}`);
    assert.equal(await page.textContent('#ns-status'), 'Active');
    for (const text of ['Redeploy', 'Sleep', 'Destroy']) assert.ok(await page.$(`main button:text-is("${text}")`), `the page: ${text}`);
    assert.match((await page.textContent(`tr[data-run="${PIPELINE}"]`)) ?? '', new RegExp(`deployed\\s*${branch}`));
    assert.ok(await page.$('tr[data-workload="web"]'), 'its Deployment is listed');
    await screenshot(page, 'dashboard-preview.png');
    assert.deepEqual(await axeViolations(page), []);
    assert.equal(await scrollsSideways(page), false, 'the preview page scrolls sideways at 360 px');
  });

  test("dpv a plain user: the preview without buttons; forged forms refused with the rule's line, nothing changes", async () => {
    const page = plainPage;
    const before = { preview: await previewState(), web: await web(), jobs: (await jobs()).map((j) => j.metadata!.name).sort() };
    await visit(page, `${svc.url}/`);
    const row = `#previews tr[data-namespace="${preview}"]`;
    assert.match((await page.textContent(row)) ?? '', new RegExp(owner));
    assert.equal(await page.locator(`${row} button`).count(), 0, 'no button on Home');
    const csrf = await page.getAttribute('#create-namespace input[name=csrf]', 'value');
    assert.ok(csrf);
    await visit(page, `${svc.url}/namespaces/${preview}`);
    assert.equal(await page.textContent('#ns-status'), 'Active');
    assert.equal(await page.locator(`form[action^="/previews/"]`).count(), 0, 'no button on its page');

    const refusals: [string, string][] = [
      ['sleep', `only admins can put the global preview environment ${preview} to sleep.`],
      ['redeploy', `only admins can deploy a global preview environment: deploy ${preview} with --scope personal, or ask an admin.`],
      ['destroy', `only admins can destroy the global preview environment ${preview}.`],
    ];
    for (const [action, line] of refusals) {
      const res = await forge(page, `/previews/${preview}/${action}`, csrf);
      assert.equal(res.status, 403, action);
      assert.equal(res.error, line, action);
    }
    const now = { preview: await previewState(), web: await web(), jobs: (await jobs()).map((j) => j.metadata!.name).sort() };
    assert.deepEqual(now, before, 'nothing changed');
  });

  test('dpv the owner clicks Sleep, then Wake: its Deployment at zero and the page says Sleeping, then back', async () => {
    const page = ownerPage;
    await visit(page, `${svc.url}/namespaces/${preview}`);
    await press(page, 'sleep');
    assert.match((await page.textContent('#ns-status')) ?? '', /^Sleeping since /);
    assert.equal((await web()).replicas, 0);
    await waitFor(
      'no pod left in the sleeping preview',
      async () => (await svc.core.listNamespacedPod({ namespace: preview })).items.every((p) => p.metadata?.labels?.['job-name']),
      90_000,
    );
    assert.equal((await previewState()).status, 'sleeping');
    assert.ok(await page.$('main button:text-is("Wake")'), 'Wake in place of Sleep');
    assert.equal(await page.$('main button:text-is("Sleep")'), null);

    await press(page, 'wake');
    assert.equal(await page.textContent('#ns-status'), 'Active');
    await waitFor(
      'the woken Deployment ready again',
      async () => {
        const w = await web();
        return w.replicas === 1 && w.ready === 1;
      },
      90_000,
    );
    assert.equal((await previewState()).status, 'deployed');
    assert.ok(await page.$('main button:text-is("Sleep")'), 'Sleep again');
  });

  test('dpv the owner clicks Redeploy: a new run with the recorded repository, branch and variables, shown on the page', async () => {
    const page = ownerPage;
    const earlier = (await jobs()).map((j) => j.metadata!.name!);
    const first = await previewState();
    await visit(page, `${svc.url}/namespaces/${preview}`);
    const started = Date.now();
    await press(page, 'redeploy');
    const redeployed = (await jobs()).filter((j) => !earlier.includes(j.metadata!.name!));
    assert.equal(redeployed.length, 1, 'one new run');
    const env = Object.fromEntries((redeployed[0]!.spec!.template.spec!.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
    assert.deepEqual({ repository: env['REPOSITORY'], branch: env['BRANCH'] }, { repository, branch });
    assert.match((await page.textContent(`tr[data-run="${PIPELINE}"]`)) ?? '', /progressing/);

    const done = await deployed('the redeploy deployed');
    console.log(`redeploy run: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.notEqual(done.deployedAt, first.deployedAt);
    assert.equal(done.commit, first.commit, 'the same commit of the recorded branch');
    // The recorded variables: the Compose file's ${REGISTRY} and ${PAGE_TOKEN} came from them again.
    const d = await apps.readNamespacedDeployment({ name: 'web', namespace: preview });
    const container = d.spec!.template.spec!.containers[0]!;
    assert.equal(container.image, `${REGISTRY}/nginx:1`);
    assert.equal(container.env?.find((e) => e.name === 'PAGE_TOKEN')?.value, PAGE_TOKEN);

    await visit(page, `${svc.url}/namespaces/${preview}`);
    assert.match((await page.textContent(`tr[data-run="${PIPELINE}"]`)) ?? '', new RegExp(`deployed\\s*${branch}`));
    await visit(page, `${svc.url}/namespaces/${preview}/pipelines/${PIPELINE}`);
    const facts = (await page.textContent('dl.facts')) ?? '';
    assert.match(facts, new RegExp(`Repository\\s*${repository.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(facts, new RegExp(`Branch\\s*${branch}`));
    assert.match((await page.textContent('main')) ?? '', new RegExp(`cloning ${repository.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(branch ${branch}\\)`));
  });

  test('dpv the owner clicks Destroy: the preview goes from the page and the cluster', async () => {
    const page = ownerPage;
    await visit(page, `${svc.url}/namespaces/${preview}`);
    const started = Date.now();
    await press(page, 'destroy');
    assert.equal(await page.locator(`form[action^="/previews/${preview}/"]`).count(), 0, 'no button on a preview being destroyed');
    await waitFor('the preview namespace deleted', async () => !(await svc.core.readNamespace({ name: preview }).catch(() => undefined)), 240_000);
    console.log(`destroy: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await waitFor(
      'the preview gone from Home',
      async () => {
        await visit(page, `${svc.url}/`);
        return (await page.$(`tr[data-namespace="${preview}"]`)) === null;
      },
      60_000,
    );
    const gone = await visit(page, `${svc.url}/namespaces/${preview}`);
    assert.equal(gone?.status(), 404);
    assert.equal((await serviceCall(svc.url, svc.caPem, ownerToken, 'GET', `/api/v1/previews/${preview}`)).status, 404);
  });
});
