/**
 * The dashboard's page of a workload's logs (pure): the last lines of each container of its pods,
 * interleaved in time order, each after its `pod/container`. The page's stream (`data-live`) puts
 * the same lines in place again when it opens, then adds each new line as it comes.
 */
import { html, page } from '../pages/html.ts';
import { interleave, type LogLine, logArea } from './log-lines.ts';

/** The workload kinds a logs page is for, as they appear in its URL. */
export const LOG_KINDS = { deployments: 'Deployment', statefulsets: 'StatefulSet' } as const;
export type LogKind = keyof typeof LOG_KINDS;

export interface LogsData {
  user: string;
  admin: boolean;
  csrf?: string;
  namespace: string;
  kind: LogKind;
  name: string;
  /** The pods whose logs are shown, by name. */
  pods: readonly string[];
  /** How many of each container's last lines were read. */
  tail: number;
  lines: readonly LogLine[];
}

export const logsPath = (namespace: string, kind: LogKind, name: string) => `/namespaces/${namespace}/logs/${kind}/${name}`;

export function logsPage(d: LogsData & { script: string }): string {
  const pods = d.pods.length ? html`${d.pods.map((p, i) => html`${i ? ', ' : ''}<code>${p}</code>`)}` : html`none running`;
  const live = html`<span id="live-status" role="status" class="muted">Not live</span>`;
  return page({
    title: `Logs of ${d.name}`,
    user: d.user,
    admin: d.admin,
    ...(d.csrf !== undefined ? { csrf: d.csrf } : {}),
    script: d.script,
    body: html`<p>${LOG_KINDS[d.kind]} <b>${d.name}</b> in namespace <a href="/namespaces/${d.namespace}">${d.namespace}</a> · pods: ${pods} · ${live}</p>
<p class="muted">The last ${d.tail} lines of each container, then each new line while this page is open.</p>
<div data-live="${logsPath(d.namespace, d.kind, d.name)}/events">
${logArea('log', `Logs of ${d.name}`, interleave(d.lines), 'No log lines yet.')}
</div>`,
  });
}
