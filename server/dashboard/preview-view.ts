/**
 * A preview environment as Home and its namespace page show it (pure): its scope, its source as a
 * link (http and https only: any other scheme stays text), and the Redeploy, Sleep, Wake and Destroy buttons
 * the preview routes' rules allow the viewer (previews/sleep.ts, previews/previews.ts).
 */
import { csrfField, html, type Html } from '../pages/html.ts';

export interface PreviewView {
  scope: 'personal' | 'global';
  sourceUrl?: string;
  sleeping: boolean;
  /** Its destroy was asked for: no button acts on it any more. */
  destroying: boolean;
  /** Redeploy with the last deploy's parameters: its owner only, a global one while an admin. */
  mayRedeploy: boolean;
  maySleep: boolean;
  mayDestroy: boolean;
}

/** A link only for an http(s) URL: a `javascript:` or `data:` source is shown, never followed. */
export function sourceLink(url: string): Html {
  return /^https?:\/\//i.test(url) ? html`<a href="${url}">${url}</a>` : html`<code>${url}</code>`;
}

/** "global preview · source <link>". */
export function previewFacts(p: PreviewView): Html {
  return html`<span class="muted">${p.scope} preview</span>${p.sourceUrl ? html` · source ${sourceLink(p.sourceUrl)}` : ''}`;
}

/** The buttons the viewer may press, posting to /previews/<name>/<action>; `back` is where the answer returns to. */
export function previewButtons(name: string, p: PreviewView, csrf: string | undefined, back?: string): Html | '' {
  if (csrf === undefined || p.destroying) return '';
  const form = (verb: string, text: string) =>
    html`<form class="inline" method="post" action="/previews/${name}/${verb}">${csrfField(csrf)}${
      back ? html`<input type="hidden" name="back" value="${back}">` : ''
    }<button aria-label="${text} ${name}">${text}</button></form>`;
  const sleepWake = p.sleeping ? form('wake', 'Wake') : p.maySleep ? form('sleep', 'Sleep') : '';
  const redeploy = p.mayRedeploy ? html`${form('redeploy', 'Redeploy')} ` : '';
  return html`${redeploy}${sleepWake} ${p.mayDestroy ? form('destroy', 'Destroy') : ''}`;
}
