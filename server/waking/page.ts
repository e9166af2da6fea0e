/**
 * What the waking page answers: a browser gets a small page that reloads itself (a meta refresh, no
 * script) until the front door routes the host to the application again; an API client gets one
 * line of plain text. Both are 503 with Retry-After, so a client that retries waits that long.
 */
import { html, page } from '../pages/html.ts';

/** Seconds between two reloads of the page (and the Retry-After of every answer). */
export const RELOAD_SECONDS = 5;

/** The page's headers: no script, no style from elsewhere, no form, not framed, never stored. */
export const WAKING_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'retry-after': String(RELOAD_SECONDS),
};

export function wakingPage(namespace: string, host: string | undefined): string {
  const what = host ? html`<code>${host}</code>` : 'the application';
  return page({
    title: 'Waking up',
    refreshSeconds: RELOAD_SECONDS,
    body: html`<p>The namespace <code>${namespace}</code> was asleep and is waking up.</p>
<p>This page reloads itself every ${RELOAD_SECONDS} seconds until ${what} answers.</p>`,
  });
}

/** The one line an API client gets. */
export function wakingLine(namespace: string): string {
  return `namespace ${namespace} is waking up: retry in ${RELOAD_SECONDS} s\n`;
}
