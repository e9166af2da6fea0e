/**
 * The dashboard's page of one namespace, rendered from a snapshot of its objects (pure): its
 * environments from devtool's records (name, source, status, when, endpoints), the dev containers
 * `up` runs there (from the session state each publishes), and its workloads with their pods
 * (status, restarts, the last failure, a link to their logs), then the pipeline runs recorded
 * there; above them its status line (sleep, the announced automatic sleep and deletion) and its
 * buttons. Each of these sections is also what a live update sends (`namespaceSections`): the
 * page's script puts it in place of the old one.
 */
import { DEV_SESSION_STALE_MS, type DevSessionState } from '../../api/dev-session.ts';
import { html, type Html, page, tableHead } from '../pages/html.ts';
import { previewButtons, previewFacts, type PreviewView } from './preview-view.ts';
import { announcement, type SleepView, sleepButton } from './sleep-view.ts';
import type { RunRecord } from '../store/store.ts';
import { logsPath } from './logs-page.ts';
import { runsSection } from './pipeline-page.ts';
import { type EnvironmentSummary, endpointsOf, type NamespaceSnapshot, type PodSummary, podsOf, type WorkloadSummary, when } from './model.ts';

/** Times as every dashboard page shows them (model.ts), for the pages that import them from here. */
export { when } from './model.ts';

export interface NamespaceData extends Partial<SleepView> {
  user: string;
  /** The viewer is an admin (the navigation lists Admin). */
  admin?: boolean;
  csrf?: string;
  name: string;
  owner: string;
  /** Active, Terminating, or its sleep ("Sleeping since ... (by ...)"). */
  status: string;
  /** A preview environment's scope, source and buttons. */
  preview?: PreviewView;
  snapshot: NamespaceSnapshot;
  /** Environments a pipeline of the service deploys (their source shows as pipeline). */
  pipelines: ReadonlySet<string>;
  /** The pipeline runs recorded here. */
  runs: readonly RunRecord[];
  /** Now: a dev session whose heartbeat is older than DEV_SESSION_STALE_MS is shown as gone. */
  now: Date;
}

/** The ids of the live sections, in page order. */
export const SECTIONS = ['ns-state', 'ns-actions', 'environments', 'sessions', 'workloads', 'pipelines'] as const;
export type SectionId = (typeof SECTIONS)[number];

const SOURCES: Record<string, string> = { compose: 'Compose', manifest: 'manifest' };

function environmentRow(e: EnvironmentSummary, d: NamespaceData): Html {
  const source = d.pipelines.has(e.name) ? 'pipeline' : (SOURCES[e.source] ?? (e.source || 'unknown'));
  const links = endpointsOf(e.name, d.snapshot.ingresses).map((u) => html`<li><a href="${u}">${u}</a></li>`);
  const status = e.status === 'error' ? html`<span class="bad">error</span>${e.error ? html`: ${e.error}` : ''}` : html`${e.status}`;
  return html`<tr data-environment="${e.name}"><td data-label="Environment">${e.name}</td><td data-label="Source">${source}</td>
<td data-label="Status">${status}</td><td data-label="Updated">${when(e.updated)}</td>
<td data-label="Endpoints">${links.length ? html`<ul class="plain">${links}</ul>` : html`<span class="muted">none</span>`}</td></tr>`;
}

function environments(d: NamespaceData): Html {
  if (d.snapshot.environments.length === 0) return html`<p class="muted">No environment deployed with devtool.</p>`;
  return html`<table class="cards">${tableHead(['Environment', 'Source', 'Status', 'Updated', 'Endpoints'])}
<tbody>${d.snapshot.environments.map((e) => environmentRow(e, d))}</tbody></table>`;
}

function podItem(p: PodSummary): Html {
  const bad = p.lastFailure !== undefined || !p.ready;
  return html`<li data-pod="${p.name}"><code>${p.name}</code>: <span class="${bad ? 'bad' : 'ok'}" data-status>${p.status}${p.ready ? ', ready' : ''}</span>${
    p.restarts ? html`, ${p.restarts} restart${p.restarts === 1 ? '' : 's'}` : ''
  }${p.lastFailure ? html`, last failure: ${p.lastFailure}` : ''}</li>`;
}

function workloadRow(namespace: string, w: WorkloadSummary, pods: readonly PodSummary[]): Html {
  const mine = podsOf(w, pods);
  const logs = logsPath(namespace, w.kind === 'Deployment' ? 'deployments' : 'statefulsets', w.name);
  const link = html`<a href="${logs}" aria-label="Logs of ${w.name}">Logs</a>`;
  return html`<tr data-workload="${w.name}"><td data-label="Workload">${w.name} <span class="muted">${w.kind}</span> ${link}</td>
<td data-label="Environment">${w.environment ?? html`<span class="muted">none</span>`}</td>
<td data-label="Ready"><span class="${w.ready < w.desired ? 'bad' : ''}">${w.ready}/${w.desired}</span></td>
<td data-label="Pods">${mine.length ? html`<ul class="plain">${mine.map(podItem)}</ul>` : html`<span class="muted">no pods</span>`}</td></tr>`;
}

function workloads(d: NamespaceData): Html {
  const { workloads, pods } = d.snapshot;
  const owned = new Set(workloads.flatMap((w) => podsOf(w, pods).map((p) => p.name)));
  const others = pods.filter((p) => !owned.has(p.name));
  const table = workloads.length
    ? html`<table class="cards">${tableHead(['Workload', 'Environment', 'Ready', 'Pods'])}
<tbody>${workloads.map((w) => workloadRow(d.name, w, pods))}</tbody></table>`
    : html`<p class="muted">No Deployments or StatefulSets.</p>`;
  const rest = others.length ? html`<h3>Other pods</h3><ul class="plain">${others.map(podItem)}</ul>` : '';
  return html`${table}${rest}`;
}

function syncText(sync: DevSessionState['sync']): Html {
  switch (sync.state) {
    case 'syncing':
      return html`syncing: ${sync.toReceive} to receive, ${sync.toSend} to send`;
    case 'error':
      return html`<span class="bad">error</span>: ${sync.error}`;
    case 'watching':
      return html`<span class="ok">in sync</span>, watching`;
    default:
      return html`${sync.state}`;
  }
}

function sessionRow(name: string, s: DevSessionState, now: Date): Html {
  const gone = s.endedAt !== undefined || now.getTime() - Date.parse(s.heartbeatAt) > DEV_SESSION_STALE_MS;
  const state = s.endedAt
    ? html`ended ${when(s.endedAt)}`
    : gone
      ? html`<span class="bad">not heard from</span> since ${when(s.heartbeatAt)}`
      : s.connection.state === 'connected'
        ? html`<span class="ok">connected</span>`
        : html`<span class="bad">reconnecting</span> since ${when(s.connection.since)}`;
  const latest = s.conflicts.latest.length ? html`<ul class="plain">${s.conflicts.latest.map((c) => html`<li><code>${c}</code></li>`)}</ul>` : '';
  const conflicts = s.conflicts.total ? html`<span class="bad">${s.conflicts.total}</span>${latest}` : html`none`;
  const sync = gone ? html`<span class="muted">unknown</span>` : syncText(s.sync);
  const forwards = s.forwards.length
    ? html`<ul class="plain">${s.forwards.map((f) => html`<li>localhost:${f.local} → ${f.remote}</li>`)}</ul>`
    : html`<span class="muted">none</span>`;
  return html`<tr data-session="${name}"><td data-label="Dev container">${name}</td><td data-label="Whose">${s.user}</td>
<td data-label="Since">${when(s.startedAt)}</td><td data-label="State">${state}</td><td data-label="Sync">${sync}</td>
<td data-label="Conflict copies">${conflicts}</td><td data-label="Forwards">${forwards}</td></tr>`;
}

/** The dev containers `up` runs here, from what each publishes on its dev Deployment. */
function sessions(d: NamespaceData): Html {
  const up = d.snapshot.workloads.filter((w) => w.session);
  if (up.length === 0) return html`<p class="muted">No dev container is up.</p>`;
  return html`<table class="cards">${tableHead(['Dev container', 'Whose', 'Since', 'State', 'Sync', 'Conflict copies', 'Forwards'])}
<tbody>${up.map((w) => sessionRow(w.name, w.session!, d.now))}</tbody></table>
<p class="muted">Whose: as the developer's devtool wrote it.</p>`;
}

/** Its status (`#ns-status`: Active, Terminating, its sleep) and the announced automatic sleep or deletion. */
function state(d: NamespaceData): Html {
  const next = announcement(d);
  return html`status <span id="ns-status">${d.status}</span>${next ? html` · ${next}` : ''}`;
}

/** A preview's facts and the buttons the viewer may use here. */
function actions(d: NamespaceData): Html {
  const back = `/namespaces/${d.name}`;
  const button = d.preview ? previewButtons(d.name, d.preview, d.csrf, back) : sleepButton(d.name, { sleepable: false, ...d }, d.csrf, back, back);
  const facts = d.preview ? html`<p>${previewFacts(d.preview)}</p>` : '';
  return html`${facts}${button ? html`<div>${button}</div>` : ''}`;
}

/** The inner HTML of each live section. */
export function namespaceSections(d: NamespaceData): Record<SectionId, Html> {
  return {
    'ns-state': state(d),
    'ns-actions': actions(d),
    environments: environments(d),
    sessions: sessions(d),
    workloads: workloads(d),
    pipelines: runsSection(d.name, d.runs, d.now),
  };
}

/** The page; `notLive`, why it cannot be live (it opens no stream then, and says so). */
export function namespacePage(d: NamespaceData & { script: string; notLive?: string }): string {
  const s = namespaceSections(d);
  const live = html`<span id="live-status" role="status" class="muted">${d.notLive ? `Not live: ${d.notLive}` : 'Not live'}</span>`;
  return page({
    title: `Namespace ${d.name}`,
    user: d.user,
    admin: d.admin === true,
    ...(d.csrf !== undefined ? { csrf: d.csrf } : {}),
    script: d.script,
    body: html`<div${d.notLive ? '' : html` data-live="/namespaces/${d.name}/events"`}>
<p>Owner <b>${d.owner}</b> · <span id="ns-state">${s['ns-state']}</span> · ${live}</p>
<div id="ns-actions">${s['ns-actions']}</div>
<section aria-labelledby="h-environments"><h2 id="h-environments">Environments</h2><div id="environments">${s.environments}</div></section>
<section aria-labelledby="h-sessions"><h2 id="h-sessions">Dev containers</h2><div id="sessions">${s.sessions}</div></section>
<section aria-labelledby="h-workloads"><h2 id="h-workloads">Workloads</h2><div id="workloads">${s.workloads}</div></section>
<section aria-labelledby="h-pipelines"><h2 id="h-pipelines">Pipeline runs</h2><div id="pipelines">${s.pipelines}</div></section>
</div>`,
  });
}
