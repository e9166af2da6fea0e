/**
 * The dashboard's pipeline runs (pure): the runs recorded in a namespace (a section of its page), and
 * a run's page with its status and its log: the recorded log of an ended run, the runner's output
 * so far for a running one, which the page's stream then extends line by line and whose status it
 * puts in place when the run ends.
 */
import type { RunRecord } from '../store/store.ts';
import { html, type Html, page, tableHead } from '../pages/html.ts';
import { type LogLine, logArea } from './log-lines.ts';
import { when } from './model.ts';

export const pipelinePath = (namespace: string, name: string) => `/namespaces/${namespace}/pipelines/${name}`;

export const isRunning = (r: Pick<RunRecord, 'status'>) => r.status === 'progressing' || r.status === 'destroying';

/** "2 min 5 s" between two ISO times; to `now` while running. */
export function duration(r: Pick<RunRecord, 'startedAt' | 'finishedAt'>, now: Date): string {
  const end = r.finishedAt ? Date.parse(r.finishedAt) : now.getTime();
  const s = Math.max(0, Math.round((end - Date.parse(r.startedAt)) / 1000));
  if (Number.isNaN(s)) return '';
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function statusHtml(r: RunRecord): Html {
  if (r.status === 'error') return html`<span class="bad">error</span>${r.message ? html`: ${r.message}` : ''}`;
  if (isRunning(r)) return html`<span data-running>${r.status}</span>`;
  return html`<span class="ok">${r.status}</span>`;
}

const branchOf = (r: RunRecord) => r.clonedBranch ?? r.branch;
const shortCommit = (r: RunRecord) => (r.commit ? html`<code>${r.commit.slice(0, 12)}</code>` : html`<span class="muted">not known yet</span>`);

function runRow(namespace: string, r: RunRecord, now: Date): Html {
  const link = html`<a href="${pipelinePath(namespace, r.name)}">${r.name}</a>`;
  return html`<tr data-run="${r.name}"><td data-label="Pipeline">${link} <span class="muted">${r.action}</span></td>
<td data-label="Status">${statusHtml(r)}</td><td data-label="Branch">${branchOf(r) ?? html`<span class="muted">default</span>`}</td>
<td data-label="Commit">${shortCommit(r)}</td><td data-label="Started">${when(r.startedAt)}</td><td data-label="Duration">${duration(r, now)}</td></tr>`;
}

/** The namespace page's section: its pipelines' last runs, by name. */
export function runsSection(namespace: string, runs: readonly RunRecord[], now: Date): Html {
  if (runs.length === 0) return html`<p class="muted">No pipeline has run here.</p>`;
  const sorted = [...runs].sort((a, b) => a.name.localeCompare(b.name));
  return html`<table class="cards">${tableHead(['Pipeline', 'Status', 'Branch', 'Commit', 'Started', 'Duration'])}
<tbody>${sorted.map((r) => runRow(namespace, r, now))}</tbody></table>`;
}

/** The run's facts, a live section of its page (put in place when the run ends). */
export function runFacts(r: RunRecord, now: Date): Html {
  return html`<dl class="facts"><dt>Status</dt><dd data-status>${statusHtml(r)}</dd>
<dt>Action</dt><dd>${r.action}</dd><dt>Repository</dt><dd>${r.repository}</dd>
<dt>Branch</dt><dd>${branchOf(r) ?? html`<span class="muted">default</span>`}</dd><dt>Commit</dt><dd>${shortCommit(r)}</dd>
<dt>Started</dt><dd>${when(r.startedAt)}</dd><dt>Duration</dt><dd>${duration(r, now)}${isRunning(r) ? ' so far' : ''}</dd></dl>`;
}

/** A run's text output as lines of no source. */
export const outputLines = (text: string): LogLine[] =>
  text === ''
    ? []
    : text
        .replace(/\n$/, '')
        .split('\n')
        .map((t) => ({ source: '', at: Number.NaN, text: t }));

export interface RunPageData {
  user: string;
  admin: boolean;
  csrf?: string;
  namespace: string;
  record: RunRecord;
  /** The recorded log, or the runner's output so far. */
  output: string;
  now: Date;
}

export function runPage(d: RunPageData & { script: string }): string {
  const r = d.record;
  const running = isRunning(r);
  return page({
    title: `Pipeline ${r.name}`,
    user: d.user,
    admin: d.admin,
    ...(d.csrf !== undefined ? { csrf: d.csrf } : {}),
    ...(running ? { script: d.script } : {}),
    body: html`<p>In namespace <a href="/namespaces/${d.namespace}">${d.namespace}</a>${
      running ? html` · <span id="live-status" role="status" class="muted">Not live</span>` : ''
    }</p>
<div${running ? html` data-live="${pipelinePath(d.namespace, r.name)}/events"` : ''}>
<section aria-labelledby="h-run"><h2 id="h-run">Run</h2><div id="run">${runFacts(r, d.now)}</div></section>
<section aria-labelledby="h-log"><h2 id="h-log">Log</h2>${running ? '' : html`<p class="muted">The end of the run's log, as recorded when it ended.</p>`}
${logArea('log', `Log of pipeline ${r.name}`, outputLines(d.output), running ? 'No output yet.' : 'No output recorded.')}</section>
</div>`,
  });
}
