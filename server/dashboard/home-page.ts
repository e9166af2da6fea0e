/**
 * The dashboard's home page, rendered from plain data (pure): the user's namespaces (status and
 * sleep, owner, what runs in each, the last activity, the announced automatic sleep and deletion),
 * the global previews, and the forms to create, delete, put to sleep and wake namespaces. The two
 * lists are also what a live update sends (`homeSections`): the page's script puts them in place.
 */
import { DNS_LABEL_PATTERN } from '../../api/dns-label.ts';
import { csrfField, html, type Html, page, tableHead } from '../pages/html.ts';
import { previewButtons, previewFacts, type PreviewView } from './preview-view.ts';
import { announcement, type SleepView, sleepButton } from './sleep-view.ts';
import { when } from './model.ts';

export interface HomeNamespace extends SleepView {
  name: string;
  /** Active, Terminating, or its sleep: "Sleeping since ... by ...", "Waking since ...". */
  status: string;
  /** The latest activity the service knows of (ISO 8601): a deploy, a dev session, a request to an endpoint. */
  lastActivity?: string;
  owner: string;
  personal: boolean;
  /** Environments recorded in it and pods ready / total; absent when they could not be read. */
  running?: { environments: number; ready: number; total: number };
  /** A preview environment: its scope, source and what the viewer may do with it. */
  preview?: PreviewView;
  /** The viewer may delete it here (its owner or an admin, not personal, not a preview, not already going). */
  deletable: boolean;
}

export interface HomeData {
  user: string;
  /** The viewer is an admin (the navigation lists Admin). */
  admin?: boolean;
  /** The browser session's CSRF token; absent for a page rendered for an API token (no forms). */
  csrf?: string;
  namespaces: HomeNamespace[];
  previews: HomeNamespace[];
  error?: string;
}

/** The ids of Home's live sections, in page order. */
export const HOME_SECTIONS = ['namespaces', 'previews'] as const;
export type HomeSectionId = (typeof HOME_SECTIONS)[number];

/** Where Home's live updates come from (`data-live`). */
export const HOME_EVENTS_PATH = '/events';

function runningCell(n: HomeNamespace): Html {
  if (!n.running) return html`<td data-label="Running" class="muted">unknown</td>`;
  const { environments, ready, total } = n.running;
  const pods = html`<span class="${ready < total ? 'bad' : ''}">${ready}/${total} pods ready</span>`;
  return html`<td data-label="Running">${environments} environment${environments === 1 ? '' : 's'}, ${pods}</td>`;
}

function table(caption: string, list: readonly HomeNamespace[], csrf: string | undefined): Html {
  if (list.length === 0) return html`<p class="muted">None.</p>`;
  const rows = list.map((n) => {
    const button = html`<button aria-label="Delete namespace ${n.name}">Delete</button>`;
    const del =
      n.deletable && csrf !== undefined
        ? html`<form class="inline" method="post" action="/namespaces/${n.name}/delete">${csrfField(csrf)}${button}</form>`
        : '';
    const personal = n.personal ? html` <span class="muted">(personal)</span>` : n.preview ? html`<br>${previewFacts(n.preview)}` : '';
    const actions = n.preview ? previewButtons(n.name, n.preview, csrf) : html`${sleepButton(n.name, n, csrf, `/namespaces/${n.name}`)} ${del}`;
    const next = announcement(n);
    const last = n.lastActivity ? when(n.lastActivity) : html`<span class="muted">unknown</span>`;
    return html`<tr data-namespace="${n.name}"><td data-label="Namespace"><a href="/namespaces/${n.name}">${n.name}</a>${personal}</td>
<td data-label="Status">${n.status}${next ? html`<br>${next}` : ''}</td><td data-label="Owner">${n.owner}</td>${runningCell(n)}
<td data-label="Last activity">${last}</td><td>${actions}</td></tr>`;
  });
  const head = tableHead(['Namespace', 'Status', 'Owner', 'Running', 'Last activity', html`<span class="sr">Actions</span>`]);
  return html`<table class="cards"><caption class="muted">${caption}</caption>${head}
<tbody>${rows}</tbody></table>`;
}

/** The inner HTML of each live section. */
export function homeSections(d: Pick<HomeData, 'namespaces' | 'previews' | 'csrf'>): Record<HomeSectionId, Html> {
  return {
    namespaces: table('Namespaces you own', d.namespaces, d.csrf),
    previews: table('Preview environments every user can see', d.previews, d.csrf),
  };
}

/** The page; with `script`, it updates its lists live (HOME_EVENTS_PATH). */
export function homePage(d: HomeData & { script?: string }): string {
  const s = homeSections(d);
  const live = d.script ? html`<p><span id="live-status" role="status" class="muted">Not live</span></p>` : '';
  const create =
    d.csrf === undefined
      ? ''
      : html`<h2>Create a namespace</h2>
<form method="post" action="/namespaces" id="create-namespace">${csrfField(d.csrf)}
<label>Name <input type="text" name="name" required maxlength="63" pattern="${DNS_LABEL_PATTERN.slice(1, -1)}" autocomplete="off"></label>
<button>Create namespace</button></form>`;
  return page({
    title: 'Home',
    user: d.user,
    admin: d.admin === true,
    ...(d.csrf !== undefined ? { csrf: d.csrf } : {}),
    current: 'home',
    ...(d.error ? { error: d.error } : {}),
    ...(d.script ? { script: d.script } : {}),
    body: html`${live}<div${d.script ? html` data-live="${HOME_EVENTS_PATH}"` : ''}>
<h2>Your namespaces</h2><div id="namespaces">${s.namespaces}</div>
<h2>Global previews</h2><div id="previews">${s.previews}</div>
</div>
${create}`,
  });
}
