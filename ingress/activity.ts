/**
 * Requests as activity: the time of the last request to each namespace's endpoints, recorded as
 * LAST_REQUEST on its Namespace (api/namespace-sleep.ts; the service's idle sleep reads it).
 *
 * The source is Caddy's access log (translate.ts turns it on): Caddy appends one JSON line per
 * request to a file in an emptyDir both containers mount, and the controller reads what was added
 * every few seconds. A request costs Caddy one buffered write to that file, whatever the controller
 * does; the controller being slow or restarted delays a record, never a request. Caddy rolls the
 * file at 1 MB and keeps one old file, so the disk holds under 2 MB, and one pass reads at most
 * READ_BUDGET bytes and keeps one entry per namespace: memory stays bounded whatever the traffic
 * and whatever Host headers clients invent (a host that is no endpoint maps to no namespace).
 *
 * A namespace gets a write at most once a minute (its annotation already within a minute of the
 * request: none), and only a namespace this release's service made (labelled devtool.dev/service
 * with the release namespace), never another one.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { V1Namespace } from '@kubernetes/client-node';
import { LAST_REQUEST } from '../api/namespace-sleep.ts';

/** The label the service puts on every namespace it makes, valued with its own namespace (server/store/namespace-policy.ts). */
export const SERVICE_LABEL = 'devtool.dev/service';
/** The least time between two writes of one namespace's LAST_REQUEST. */
export const WRITE_INTERVAL_MS = 60_000;
/** The most bytes of access log one pass reads; the rest waits for the next pass. */
export const READ_BUDGET = 4 * 1024 * 1024;
/** A longer line is no access log line of ours: dropped. */
const MAX_LINE = 64 * 1024;

/**
 * The latest request time of each namespace in complete access log lines (`ts`, Unix seconds, as
 * Caddy writes it; `request.host` names the endpoint). `namespaceOf` maps a host to its namespace;
 * lines it maps to none are skipped.
 */
export function lastRequests(lines: Iterable<string>, namespaceOf: (host: string) => string | undefined): Map<string, number> {
  const latest = new Map<string, number>();
  for (const line of lines) {
    let entry: { ts?: unknown; request?: { host?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const host = entry?.request?.host;
    if (typeof host !== 'string' || typeof entry.ts !== 'number') continue;
    const namespace = namespaceOf(hostName(host));
    if (namespace === undefined) continue;
    const at = Math.round(entry.ts * 1000);
    if (at > (latest.get(namespace) ?? 0)) latest.set(namespace, at);
  }
  return latest;
}

/** The host without a port, lower case: how the translation names it. */
function hostName(host: string): string {
  return host.replace(/:\d+$/, '').toLowerCase().replace(/\.$/, '');
}

export interface ActivityWrite {
  namespace: string;
  /** RFC 3339: the value of LAST_REQUEST. */
  at: string;
}

/**
 * Which namespaces get a new LAST_REQUEST: those of `seen` (latest request, ms) this release's
 * service made, whose annotation is missing or a minute or more older than the request, and which
 * this front door has not written in the last minute (`written`, ms; several front doors share the
 * annotation's check).
 */
export function activityWrites(
  seen: ReadonlyMap<string, number>,
  namespaces: readonly V1Namespace[],
  written: ReadonlyMap<string, number>,
  serviceNamespace: string,
  now: number,
): ActivityWrite[] {
  const byName = new Map(namespaces.map((n) => [n.metadata?.name ?? '', n]));
  const writes: ActivityWrite[] = [];
  for (const [namespace, at] of [...seen].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const ns = byName.get(namespace);
    if (ns?.metadata?.labels?.[SERVICE_LABEL] !== serviceNamespace) continue;
    const recorded = Date.parse(ns.metadata?.annotations?.[LAST_REQUEST] ?? '');
    if (!Number.isNaN(recorded) && at - recorded < WRITE_INTERVAL_MS) continue;
    if (now - (written.get(namespace) ?? Number.NEGATIVE_INFINITY) < WRITE_INTERVAL_MS) continue;
    writes.push({ namespace, at: new Date(at).toISOString() });
  }
  return writes;
}

/**
 * Reads what was appended to a file since the last read, following Caddy's roll: when the name
 * points to a new file, the old one (still open) is read to its end first. Complete lines only;
 * a partial last line waits for the next read.
 */
export class FileTail {
  private fd: number | undefined;
  private inode = 0;
  private offset = 0;
  private partial = '';
  private decoder = new StringDecoder('utf8');

  constructor(private readonly path: string) {}

  /** The complete lines appended since the last call, at most `budget` bytes of them. */
  read(budget = READ_BUDGET): string[] {
    const lines: string[] = [];
    let left = budget;
    if (this.fd !== undefined) {
      const current = this.currentInode();
      if (current !== this.inode) {
        // Rolled (or removed): finish the old file, then start the new one from its beginning.
        left -= this.drain(lines, left);
        if (left <= 0) return lines;
        this.close();
      } else if (fstatSync(this.fd).size < this.offset) {
        this.offset = 0;
        this.partial = '';
        this.decoder = new StringDecoder('utf8');
      }
    }
    if (this.fd === undefined && !this.open()) return lines;
    this.drain(lines, left);
    return lines;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.offset = 0;
    this.partial = '';
    this.decoder = new StringDecoder('utf8');
  }

  private currentInode(): number {
    try {
      return statSync(this.path).ino;
    } catch {
      return -1;
    }
  }

  private open(): boolean {
    try {
      this.fd = openSync(this.path, 'r');
    } catch {
      return false;
    }
    this.inode = fstatSync(this.fd).ino;
    this.offset = 0;
    this.partial = '';
    this.decoder = new StringDecoder('utf8');
    return true;
  }

  /** Reads up to `budget` bytes from the offset into `lines`; returns the bytes read. */
  private drain(lines: string[], budget: number): number {
    const chunk = Buffer.alloc(64 * 1024);
    let total = 0;
    while (total < budget) {
      const n = readSync(this.fd!, chunk, 0, Math.min(chunk.length, budget - total), this.offset);
      if (n === 0) break;
      this.offset += n;
      total += n;
      const parts = (this.partial + this.decoder.write(chunk.subarray(0, n))).split('\n');
      this.partial = parts.pop() ?? '';
      if (this.partial.length > MAX_LINE) this.partial = '';
      lines.push(...parts.filter((l) => l.length > 0 && l.length <= MAX_LINE));
    }
    return total;
  }
}

/** What a pass needs from the cluster: the Namespaces the watch holds, and the write. */
export interface ActivityTarget {
  namespaces(): readonly V1Namespace[];
  /** Sets LAST_REQUEST on the namespace (a merge patch of the annotation). */
  record(write: ActivityWrite): Promise<void>;
}

/**
 * One front door's records: each pass turns the access log lines read since the last pass into
 * writes. A failed write is tried again in the next pass; what it keeps is one entry per namespace.
 */
export class ActivityRecorder {
  /** Latest request of each namespace not yet written (ms). */
  private pending = new Map<string, number>();
  /** When this front door last wrote each namespace (ms), for the last minute only. */
  private written = new Map<string, number>();

  constructor(
    private readonly target: ActivityTarget,
    private readonly serviceNamespace: string,
    private readonly log: (line: string) => void,
  ) {}

  async pass(lines: readonly string[], namespaceOf: (host: string) => string | undefined, now: number): Promise<ActivityWrite[]> {
    for (const [namespace, at] of lastRequests(lines, namespaceOf)) {
      if (at > (this.pending.get(namespace) ?? 0)) this.pending.set(namespace, at);
    }
    for (const [namespace, at] of this.written) if (now - at >= WRITE_INTERVAL_MS) this.written.delete(namespace);
    const writes = activityWrites(this.pending, this.target.namespaces(), this.written, this.serviceNamespace, now);
    const failed = new Map<string, number>();
    const done: ActivityWrite[] = [];
    for (const w of writes) {
      try {
        await this.target.record(w);
        this.written.set(w.namespace, now);
        done.push(w);
      } catch (e) {
        failed.set(w.namespace, this.pending.get(w.namespace)!);
        this.log(`recording the last request of namespace ${w.namespace} failed, retrying: ${(e as Error).message}`);
      }
    }
    // Requests within a minute of the recorded one, and namespaces not ours, are done with.
    this.pending = failed;
    return done;
  }
}
