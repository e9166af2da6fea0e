/**
 * What the dashboard's browser tests share: signing up on the service's page, the accessibility
 * check (axe-core injected into the page), the 360 px check and the screenshots the docs show (when asked).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { submit, visit } from './browser.ts';
import { repoRoot } from './cli.ts';
import type { InstalledService } from './installed-service.ts';

export const PASSWORD = 'correct horse battery';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A new account made on the sign-up form (Home sends the browser to sign in, then back), adopted for clean-up. */
export async function signUp(svc: InstalledService, page: Page, name: string): Promise<void> {
  await visit(page, `${svc.url}/`);
  await submit(
    page,
    async () => {
      await page.fill('#signup input[name=name]', name);
      await page.fill('#signup input[name=password]', PASSWORD);
      await page.fill('#signup input[name=password2]', PASSWORD);
      await page.click('#signup button');
    },
    () => page.waitForURL(`${svc.url}/`),
  );
  await svc.adoptUser(name);
}

/** A new API token named `name`, made on the account's tokens page as a user makes one, and shown once. */
export async function tokenOnPage(serviceUrl: string, page: Page, name: string): Promise<string> {
  await visit(page, `${serviceUrl}/account/tokens`);
  await submit(
    page,
    async () => {
      await page.fill('#create-token input[name=name]', name);
      await page.click('#create-token button');
    },
    () => page.waitForSelector('#new-token'),
  );
  return ((await page.textContent('#new-token')) ?? '').trim();
}

/** axe-core's serious and critical violations on the page, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe;
    return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes} nodes)`);
}

/** Whether the page scrolls sideways at 360 px wide (the viewport goes back to 1000 px after). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  await page.setViewportSize({ width: 360, height: 800 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
  await page.setViewportSize({ width: 1000, height: 700 });
  return wide;
}

/**
 * The page as it is now, to docs/images/<name>, only when DEVTOOL_SCREENSHOTS=1 (`npm run
 * screenshots`): a plain test run leaves the checkout as it found it.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['DEVTOOL_SCREENSHOTS'] !== '1') return;
  mkdirSync(join(repoRoot, 'docs/images'), { recursive: true });
  writeFileSync(join(repoRoot, 'docs/images', name), await page.screenshot({ fullPage: false }));
}
