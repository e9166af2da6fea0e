/**
 * Log lines as the dashboard shows them (pure): a line of a pod's log read with timestamps, several
 * containers' lines interleaved by time, and their HTML, one element per line so that the page can
 * append new ones and drop the oldest (live-script.ts `append`).
 */
import { html, type Html } from '../pages/html.ts';

export interface LogLine {
  /** Where it comes from: `pod/container` for a workload's log; empty for a pipeline run's. */
  source: string;
  /** Milliseconds since the epoch, from the line's timestamp (NaN when it had none). */
  at: number;
  text: string;
}

/** The latest lines a log page keeps: older ones leave the page as new ones come. */
export const KEEP_LINES = 1000;

/** `2026-12-02T14:05:00.123456789Z text` (the log API with timestamps) as a line of `source`. */
export function timedLogLine(source: string, raw: string): LogLine {
  const space = raw.indexOf(' ');
  const at = space > 0 ? Date.parse(raw.slice(0, space)) : Number.NaN;
  return Number.isNaN(at) ? { source, at, text: raw } : { source, at, text: raw.slice(space + 1) };
}

/** Lines of several sources in time order; lines of one time keep the order they came in. */
export function interleave(lines: readonly LogLine[]): LogLine[] {
  return lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => (a.l.at || 0) - (b.l.at || 0) || a.i - b.i)
    .map(({ l }) => l);
}

/** The HTML of lines: each in its own element, its source first when it has one. */
export function logLinesHtml(lines: readonly LogLine[]): Html {
  return html`${lines.map((l) => html`<span class="line">${l.source ? html`<span class="src">${l.source}</span> ` : ''}${l.text}\n</span>`)}`;
}

/** The log area of a page: `id` is the live section the stream replaces, then appends to. */
export function logArea(id: string, label: string, lines: readonly LogLine[], empty: string): Html {
  const kept = lines.slice(-KEEP_LINES);
  return html`<pre class="log" id="${id}" tabindex="0" aria-label="${label}" data-keep="${KEEP_LINES}">${
    kept.length ? logLinesHtml(kept) : html`<span class="muted">${empty}</span>`
  }</pre>`;
}
