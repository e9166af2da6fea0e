/**
 * The service's pages are HTML made on the server, no front-end framework: every value goes
 * through `esc`, and `html` templates escape every interpolation that is not already `Html`.
 * Pages run no script (the Content-Security-Policy says so) and may not be framed.
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

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}' +
  'nav a,nav button{margin-right:1rem}form.inline{display:inline}label{display:block;margin:.5rem 0}' +
  'input[type=text],input[type=password]{width:100%;padding:.3rem}table{border-collapse:collapse;width:100%}' +
  'td,th{text-align:left;padding:.3rem;border-bottom:1px solid #ddd}.error{color:#a00}' +
  '.secret{font-family:monospace;word-break:break-all;background:#f4f4f4;padding:.5rem}';

/** A whole page: title, an optional signed-in navigation, an optional error line, the body; it reloads itself every `refreshSeconds` when given. */
export function page(o: { title: string; user?: string; csrf?: string; error?: string; body: Html; refreshSeconds?: number }): string {
  const nav = o.user
    ? html`<nav><a href="/account/tokens">Tokens</a><a href="/account/secrets">Stored secrets</a><a href="/device">Device code</a>
<form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="${o.csrf ?? ''}"><button>Sign out ${o.user}</button></form></nav>`
    : '';
  const refresh = o.refreshSeconds ? html`<meta http-equiv="refresh" content="${o.refreshSeconds}">` : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">${refresh}
<title>${o.title} · devtool</title><style>${new Html(STYLE)}</style></head>
<body>${nav}<h1>${o.title}</h1>${o.error ? html`<p class="error" role="alert" id="error">${o.error}</p>` : ''}${o.body}</body></html>
`.text;
}
