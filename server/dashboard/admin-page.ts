/**
 * The dashboard's admin page, rendered from plain data (pure): every user with the forms an admin
 * acts with (make admin or take it back, disable, enable, delete after a confirmation), creating a
 * user (its first token shown once), every namespace and preview with its sleep, last activity and
 * announced automatic sleep or deletion, and the settings the service runs with. The rules of who
 * may do what are the routes' (accounts.ts, namespaces/actions.ts); this only draws the buttons.
 */
import { csrfField, html, type Html, page, tableHead } from '../pages/html.ts';
import { when } from './model.ts';
import type { SettingRow } from './settings-rows.ts';
import { announcement, type SleepView, sleepButton } from './sleep-view.ts';

export interface AdminUser {
  name: string;
  admin: boolean;
  disabled: boolean;
}

export interface AdminNamespace extends SleepView {
  name: string;
  owner: string;
  /** A preview environment's namespace (its own routes put it to sleep and destroy it). */
  preview: boolean;
  /** Active, Terminating, or its sleep ("Sleeping since ... (by ...)"). */
  status: string;
  lastActivity?: string;
  /** The admin may delete it here (namespaces/actions.ts mayDelete, not a preview, not going). */
  deletable: boolean;
}

export interface AdminData {
  user: string;
  /** The browser session's CSRF token; absent for a page rendered for an API token (no forms). */
  csrf?: string;
  users: AdminUser[];
  namespaces: AdminNamespace[];
  settings: SettingRow[];
  error?: string;
}

const post = (csrf: string | undefined, action: string, label: string, text: string, hidden: Html | string = ''): Html | '' =>
  csrf === undefined
    ? ''
    : html`<form class="inline" method="post" action="${action}">${csrfField(csrf)}${hidden}<button aria-label="${label}">${text}</button></form>`;

function userRow(u: AdminUser, d: AdminData): Html {
  const path = `/admin/users/${encodeURIComponent(u.name)}`;
  const onOff = u.disabled ? post(d.csrf, `${path}/enable`, `Enable ${u.name}`, 'Enable') : post(d.csrf, `${path}/disable`, `Disable ${u.name}`, 'Disable');
  const actions =
    u.name === d.user
      ? html`<span class="muted">your own account</span>`
      : d.csrf === undefined
        ? ''
        : html`${
            u.admin
              ? post(d.csrf, `${path}/admin`, `Take admin ${u.name}`, 'Take admin', html`<input type="hidden" name="admin" value="false">`)
              : post(d.csrf, `${path}/admin`, `Make admin ${u.name}`, 'Make admin', html`<input type="hidden" name="admin" value="true">`)
          } ${onOff} <a href="${path}/delete" aria-label="Delete… ${u.name}">Delete…</a>`;
  return html`<tr data-user="${u.name}"><td data-label="User">${u.name}</td><td data-label="Admin">${u.admin ? 'admin' : 'no'}</td>
<td data-label="Disabled">${u.disabled ? html`<span class="bad">disabled</span>` : 'no'}</td><td data-label="Actions">${actions}</td></tr>`;
}

function namespaceRow(n: AdminNamespace, csrf: string | undefined): Html {
  const path = `/admin/namespaces/${n.name}`;
  const sleepWake = sleepButton(n.name, n, csrf, path);
  const del = n.deletable ? post(csrf, `${path}/delete`, `Delete namespace ${n.name}`, 'Delete') : '';
  const next = announcement(n);
  const preview = n.preview ? html` <span class="muted">(preview)</span>` : '';
  return html`<tr data-namespace="${n.name}"><td data-label="Namespace"><a href="/namespaces/${n.name}">${n.name}</a>${preview}</td>
<td data-label="Owner">${n.owner}</td><td data-label="Status">${n.status}${next ? html`<br>${next}` : ''}</td>
<td data-label="Last activity">${n.lastActivity ? when(n.lastActivity) : html`<span class="muted">unknown</span>`}</td>
<td data-label="Actions">${sleepWake} ${del}</td></tr>`;
}

export function adminPage(d: AdminData): string {
  const usersHead = tableHead(['User', 'Admin', 'Disabled', 'Actions']);
  const users = html`<table class="cards" id="users"><caption class="muted">Every account of this service</caption>${usersHead}
<tbody>${d.users.map((u) => userRow(u, d))}</tbody></table>`;
  const create =
    d.csrf === undefined
      ? ''
      : html`<h3>Create a user</h3>
<form method="post" action="/admin/users" id="create-user">${csrfField(d.csrf)}
<label>Name <input type="text" name="name" required maxlength="63" autocomplete="off"></label>
<label><input type="checkbox" name="admin" value="true"> Admin</label>
<button>Create user</button></form>`;
  const namespaces = d.namespaces.length
    ? html`<table class="cards" id="all-namespaces"><caption class="muted">Every namespace and preview devtool manages</caption>${tableHead([
        'Namespace',
        'Owner',
        'Status',
        'Last activity',
        'Actions',
      ])}
<tbody>${d.namespaces.map((n) => namespaceRow(n, d.csrf))}</tbody></table>`
    : html`<p id="all-namespaces" class="muted">None.</p>`;
  const caption = 'As the chart set them; secrets only as set or not set';
  // Cards at 360 px like the other tables: a long image name or URL breaks inside its own line.
  const settings = html`<table class="cards" id="settings"><caption class="muted">${caption}</caption>${tableHead(['Setting', 'Value'])}
<tbody>${d.settings.map((s) => html`<tr><td data-label="Setting"><b>${s.name}</b></td><td data-label="Value">${s.value}</td></tr>`)}</tbody></table>`;
  return page({
    title: 'Admin',
    user: d.user,
    ...(d.csrf !== undefined ? { csrf: d.csrf } : {}),
    current: 'admin',
    admin: true,
    ...(d.error ? { error: d.error } : {}),
    body: html`<h2>Users</h2>${users}${create}
<h2>Namespaces and previews</h2>${namespaces}
<h2>Settings</h2>${settings}`,
  });
}

/** The answer to creating a user: its first API token, shown this once, and how to log in with it. */
export function userCreatedPage(d: {
  user: string;
  csrf: string;
  created: { name: string; admin: boolean; namespace: string; token: string };
  url: string;
}): string {
  const c = d.created;
  return page({
    title: `User ${c.name} created`,
    user: d.user,
    csrf: d.csrf,
    current: 'admin',
    admin: true,
    body: html`<p>${c.admin ? 'An admin' : 'A user'} with the personal namespace <code>${c.namespace}</code>. Its first API token, shown only this once:</p>
<p><code id="new-token" class="secret">${c.token}</code></p>
<p>Hand it over to ${c.name}, who logs in with:</p>
<p><code class="secret" id="login-command">devtool context use ${d.url} --token ${c.token}</code></p>
<p><a href="/admin">Back to Admin</a></p>`,
  });
}

/** The confirmation step of deleting a user: the namespaces that go with the account are named. */
export function deleteUserPage(d: { user: string; csrf: string; name: string; namespaces: readonly string[] }): string {
  const list = d.namespaces.length
    ? html`<p>These namespaces are deleted with it, with everything in them:</p><ul id="doomed">${d.namespaces.map(
        (n) => html`<li><code>${n}</code></li>`,
      )}</ul>`
    : html`<p>It owns no namespace.</p>`;
  return page({
    title: `Delete user ${d.name}?`,
    user: d.user,
    csrf: d.csrf,
    current: 'admin',
    admin: true,
    body: html`<p>The account, its tokens, password and stored secrets are deleted.</p>${list}
<form method="post" action="/admin/users/${encodeURIComponent(d.name)}/delete">${csrfField(d.csrf)}<button>Delete ${d.name} and its namespaces</button></form>
<p><a href="/admin">Keep it</a></p>`,
  });
}
