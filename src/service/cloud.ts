/**
 * The default devtool service URL, used when DEVTOOL_URL is unset.
 * Nothing may hang or fail because it is unreachable: it is only contacted by commands that need
 * the service, with a bounded timeout.
 */
export const CLOUD_URL = 'https://cloud.devtool.dev';

/** `example.com` -> `https://example.com`; trailing slashes dropped, so one service has one name. */
export function normalizeServiceUrl(text: string): string {
  const withScheme = /^https?:\/\//i.test(text) ? text : `https://${text}`;
  const url = new URL(withScheme);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

export function looksLikeUrl(text: string): boolean {
  return /^https?:\/\//i.test(text) || (/^[a-z0-9.-]+\.[a-z]{2,}(:\d+)?(\/.*)?$/i.test(text) && text.includes('.'));
}
