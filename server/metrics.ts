/**
 * The service's Prometheus metrics, in the text exposition format (version 0.0.4) written here:
 * three families do not need a client library. Counts are per process, as Prometheus expects of a
 * service with several replicas (it scrapes each pod; `sum()` adds them up).
 *
 * Labels hold only bounded, public values: a route's template (`/api/v1/secrets/:name`, never the
 * path a client sent), the method, the status, and an analytics action whose shape the contract
 * bounds (and whose count of distinct values is capped here). Never a token, a user or a value.
 */

/** Upper bounds of the request-duration histogram, in seconds. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Distinct analytics actions kept as labels; later ones count as "other" (a client chooses them). */
export const MAX_ACTIONS = 200;

interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

export class Metrics {
  private readonly analytics = new Map<string, number>();
  private readonly actions = new Set<string>();
  private readonly requests = new Map<string, number>();
  private readonly durations = new Map<string, Histogram>();

  recordAnalytics(action: string, success: boolean): void {
    if (this.actions.size < MAX_ACTIONS) this.actions.add(action);
    const shown = this.actions.has(action) ? action : 'other';
    const key = `${shown}\0${success}`;
    this.analytics.set(key, (this.analytics.get(key) ?? 0) + 1);
  }

  recordRequest(route: string, method: string, status: number, seconds: number): void {
    const key = `${route}\0${method}\0${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const hkey = `${route}\0${method}`;
    let h = this.durations.get(hkey);
    if (!h) {
      h = { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.durations.set(hkey, h);
    }
    DURATION_BUCKETS.forEach((le, i) => {
      if (seconds <= le) h.buckets[i]!++;
    });
    h.sum += seconds;
    h.count++;
  }

  /** The text Prometheus scrapes. */
  render(): string {
    const out: string[] = [];
    out.push('# HELP devtool_analytics_records_total Analytics records received from the CLI, by action and outcome.');
    out.push('# TYPE devtool_analytics_records_total counter');
    for (const [key, n] of sorted(this.analytics)) {
      const [action, success] = key.split('\0');
      out.push(`devtool_analytics_records_total${labels({ action: action!, success: success! })} ${n}`);
    }
    out.push('# HELP devtool_http_requests_total HTTP requests answered, by route template, method and status.');
    out.push('# TYPE devtool_http_requests_total counter');
    for (const [key, n] of sorted(this.requests)) {
      const [route, method, status] = key.split('\0');
      out.push(`devtool_http_requests_total${labels({ route: route!, method: method!, status: status! })} ${n}`);
    }
    out.push('# HELP devtool_http_request_duration_seconds Time to answer an HTTP request, by route template and method.');
    out.push('# TYPE devtool_http_request_duration_seconds histogram');
    for (const [key, h] of sorted(this.durations)) {
      const [route, method] = key.split('\0');
      const base = { route: route!, method: method! };
      DURATION_BUCKETS.forEach((le, i) => {
        out.push(`devtool_http_request_duration_seconds_bucket${labels({ ...base, le: String(le) })} ${h.buckets[i]}`);
      });
      out.push(`devtool_http_request_duration_seconds_bucket${labels({ ...base, le: '+Inf' })} ${h.count}`);
      out.push(`devtool_http_request_duration_seconds_sum${labels(base)} ${h.sum}`);
      out.push(`devtool_http_request_duration_seconds_count${labels(base)} ${h.count}`);
    }
    return `${out.join('\n')}\n`;
  }
}

function sorted<V>(m: Map<string, V>): [string, V][] {
  return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `{a="1",b="x\"y"}`: values escaped as the exposition format says (backslash, quote, newline). */
function labels(values: Record<string, string>): string {
  const parts = Object.entries(values).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return `{${parts.join(',')}}`;
}
