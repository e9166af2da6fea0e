/**
 * The service's pages are HTML made on the server, no front-end framework: every value goes
 * through `esc`, and `html` templates escape every interpolation that is not already `Html`.
 * Pages run no script but the service's own live-update script on the pages that ask for it
 * (LIVE_PAGE_HEADERS: no inline script, no eval), and may not be framed.
 */

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function esc(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

type Part = string | number | Html | undefined | null | false | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return esc(String(part));
}

/** A template whose interpolations are escaped (Html parts are kept as they are). */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  parts.forEach((p, i) => {
    out += render(p) + strings[i + 1]!;
  });
  return new Html(out);
}

export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:* http://localhost:*; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The pages that load the live-update script (dashboard/live-script.ts) and open its event stream:
 * the same policy, plus the service's own script and connections.
 */
export const LIVE_PAGE_HEADERS = {
  ...PAGE_HEADERS,
  'content-security-policy': `${PAGE_HEADERS['content-security-policy']}; script-src 'self'; connect-src 'self'`,
};

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:0 1rem 2rem;line-height:1.5;overflow-wrap:break-word}' +
  '.skip,.sr{position:absolute;left:-99rem}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.3rem}' +
  'header nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.3rem 1rem;padding:.6rem 0;margin:0;border-bottom:1px solid #ddd;align-items:center}' +
  'header nav a[aria-current=page]{font-weight:bold;text-decoration:none;color:inherit}' +
  'form.inline{display:inline}label{display:block;margin:.5rem 0}' +
  'input[type=text],input[type=password]{width:100%;max-width:30rem;padding:.3rem;box-sizing:border-box}table{border-collapse:collapse;width:100%}' +
  'td,th{text-align:left;padding:.3rem;border-bottom:1px solid #ddd;vertical-align:top}.error{color:#a00}.muted{color:#555}' +
  '.bad{color:#a00;font-weight:bold}.ok{color:#060}' +
  'ul.plain{list-style:none;padding:0;margin:0}.secret{font-family:monospace;word-break:break-all;background:#f4f4f4;padding:.5rem}' +
  ':focus-visible{outline:2px solid #05c;outline-offset:2px}' +
  'pre.log{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.5rem;font-size:.85rem;max-height:70vh;overflow-y:auto}' +
  'pre.log .src{color:#444}dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}' +
  'dl.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}' +
  // Narrow: each row a card whose cells take the whole width, so a long image name or URL may break anywhere.
  '@media (max-width:40rem){table.cards thead{position:absolute;left:-99rem}table.cards tr{display:block;border-bottom:1px solid #ddd;padding:.3rem 0}' +
  'table.cards td{display:block;border:0;padding:.1rem 0;overflow-wrap:anywhere}table.cards td[data-label]::before{content:attr(data-label) ": ";color:#555}}';

/** A form's hidden CSRF field. */
export const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** A table's head row of column names. */
export const tableHead = (columns: readonly (string | Html)[]): Html => html`<thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>`;

/** The navigation's entries; `current` marks the page the user is on. */
export type NavEntry = 'home' | 'tokens' | 'secrets' | 'device' | 'admin';
const NAV: readonly { id: NavEntry; href: string; label: string }[] = [
  { id: 'home', href: '/', label: 'Home' },
  { id: 'tokens', href: '/account/tokens', label: 'Tokens' },
  { id: 'secrets', href: '/account/secrets', label: 'Stored secrets' },
  { id: 'device', href: '/device', label: 'Device code' },
  { id: 'admin', href: '/admin', label: 'Admin' },
];

/** Admin is listed for admins only; a plain user's pages do not link to it. */
function navigation(user: string, csrf: string | undefined, current: NavEntry | undefined, admin: boolean): Html {
  const items = NAV.filter((n) => admin || n.id !== 'admin').map(
    (n) => html`<li><a href="${n.href}"${n.id === current ? new Html(' aria-current="page"') : ''}>${n.label}</a></li>`,
  );
  // A page rendered for an API token (no browser session) has no session to end.
  const signOut =
    csrf === undefined
      ? html`<li class="muted">${user}</li>`
      : html`<li><form class="inline" method="post" action="/logout">${csrfField(csrf)}<button>Sign out ${user}</button></form></li>`;
  return html`<header><nav aria-label="Main"><ul>${items}${signOut}</ul></nav></header>`;
}

/**
 * Who a page is for: a signed-in user and whether an admin (every page's navigation is the same for
 * the same user), or nobody (the sign-in pages).
 */
export type SignedIn = { user: string; admin: boolean } | { user?: undefined; admin?: undefined };

/**
 * A whole page: title, the signed-in navigation (when there is a user; `admin` adds Admin), an optional
 * error line, the body; `script`, the path of the service's own script the page loads
 * (LIVE_PAGE_HEADERS); `refreshSeconds`, a page that reloads itself that often (no script needed).
 */
export function page(
  o: {
    title: string;
    csrf?: string;
    current?: NavEntry;
    error?: string;
    body: Html;
    script?: string;
    refreshSeconds?: number;
  } & SignedIn,
): string {
  const nav = o.user ? navigation(o.user, o.csrf, o.current, o.admin) : '';
  const refresh = o.refreshSeconds ? html`<meta http-equiv="refresh" content="${o.refreshSeconds}">` : '';
  const script = o.script ? html`<script src="${o.script}" defer></script>` : '';
  const error = o.error ? html`<p class="error" role="alert" id="error">${o.error}</p>` : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">${refresh}
<title>${o.title} · devtool</title><style>${new Html(STYLE)}</style>${script}</head>
<body><a class="skip" href="#main">Skip to content</a>${nav}<main id="main"><h1>${o.title}</h1>${error}${o.body}</main></body></html>
`.text;
}
