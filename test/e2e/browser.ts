/**
 * A real browser for the end-to-end tests: Debian's Chromium (scripts/browser.sh installs it),
 * headless, driven by playwright-core. It trusts the CA a test hands it the way a user's browser
 * does once the CA is imported: the certificate goes into the NSS database of a throwaway HOME
 * (certutil), which Chromium on Linux reads. Without a CA it trusts only the system's roots, so a
 * test can also show that a page is refused.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request, Response } from 'playwright-core';

export interface TestBrowser {
  readonly browser: Browser;
  close(): Promise<void>;
}

export async function launchBrowser(o: { caPem?: string } = {}): Promise<TestBrowser> {
  const executablePath = execFileSync('bash', ['scripts/browser.sh', 'path'], { encoding: 'utf8' }).trim();
  const home = mkdtempSync(join(tmpdir(), 'devtool-browser-'));
  if (o.caPem) trustCa(home, o.caPem);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    env: { ...process.env, HOME: home },
    // Chromium refuses to run as root with its sandbox; the tests run as root.
    args: ['--no-sandbox'],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * `page.goto`, again when Chromium gave up with ERR_NETWORK_CHANGED. Chromium on Linux aborts a
 * load in flight whenever a network interface appears or goes, and on this machine every pod that
 * starts or ends adds or removes one (its veth; CI saw it once while another test's namespace was
 * being deleted). A user's Chrome reloads such a page by itself; the test does the same, a few
 * times. Playwright does not always name the error: a load that ended on Chromium's error page
 * may be reported as "interrupted by another navigation to chrome-error://chromewebdata/", so the
 * page's failed document request says why; when no reason arrives within a second, the error page is
 * taken for the same and the load tried again. Any other failure, a certificate refused included, is
 * thrown at once, with that reason added. Answers the page's response, as `page.goto` does.
 */
export async function visit(page: Page, url: string): Promise<Response | null> {
  for (let attempt = 1; ; attempt++) {
    const failed: string[] = [];
    const onFailed = (r: Request) => {
      if (r.isNavigationRequest()) failed.push(r.failure()?.errorText ?? 'unknown');
    };
    page.on('requestfailed', onFailed);
    try {
      return await page.goto(url);
    } catch (err) {
      const e = err as Error;
      const errorPage = e.message.includes('chrome-error://');
      // Chromium's error page can be reported before the request's failure: give that a moment to arrive.
      for (let waited = 0; errorPage && failed.length === 0 && waited < 1_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
      const why = failed.filter((f) => !e.message.includes(f));
      const networkChanged = /ERR_NETWORK_CHANGED/.test([e.message, ...why].join(' ')) || (errorPage && failed.length === 0);
      if (attempt >= 5 || !networkChanged) {
        if (why.length) e.message += ` (the page's request failed: ${why.join(', ')})`;
        throw e;
      }
    } finally {
      page.off('requestfailed', onFailed);
    }
  }
}

/**
 * A form sent: `act` fills it in and clicks, and `arrived` awaits the page it leads to (its URL, or
 * an element when the address stays the same). When
 * Chromium abandoned the form's request with ERR_NETWORK_CHANGED (see `visit`), the form's page is
 * loaded again and `act` runs again, a few times; a user resubmits the same way. Any other failure
 * of the request is thrown at once, naming Chromium's reason.
 */
export async function submit(page: Page, act: () => Promise<unknown>, arrived: () => Promise<unknown>): Promise<void> {
  const formUrl = page.url();
  for (let attempt = 1; ; attempt++) {
    let onFailed: (r: Request) => void = () => {};
    const failed = new Promise<never>((_, reject) => {
      onFailed = (r: Request) => {
        if (r.isNavigationRequest()) reject(new Error(`the form's request failed: ${r.failure()?.errorText ?? 'unknown'}`));
      };
    });
    // A failure while `act` still runs is seen by the race below; until then it is not unhandled.
    failed.catch(() => undefined);
    page.on('requestfailed', onFailed);
    try {
      await act();
      await Promise.race([arrived(), failed]);
      return;
    } catch (err) {
      if (attempt >= 5 || !/ERR_NETWORK_CHANGED/.test((err as Error).message)) throw err;
      await visit(page, formUrl);
    } finally {
      page.off('requestfailed', onFailed);
    }
  }
}

function trustCa(home: string, caPem: string): void {
  const db = join(home, '.pki', 'nssdb');
  mkdirSync(db, { recursive: true });
  const file = join(home, 'ca.pem');
  writeFileSync(file, caPem);
  execFileSync('certutil', ['-N', '-d', `sql:${db}`, '--empty-password']);
  execFileSync('certutil', ['-A', '-d', `sql:${db}`, '-t', 'C,,', '-n', 'devtool test CA', '-i', file]);
}
