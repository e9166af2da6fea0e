/**
 * Sends the spooled analytics records (analytics.ts) to the current devtool service, in batches,
 * at the end of a command, when a batch is due: enough records, or an old enough one. It is bounded
 * (a few batches per run, each call with a short timeout), and after a failure it waits before
 * trying again, so an unreachable service costs one short wait per `retryAfterMs`, not one per
 * command. Two processes never send the same records: the spool is claimed by renaming it first.
 */
import { appendFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AnalyticsRecord } from './analytics.ts';

export interface FlushOptions {
  /** Records per request. */
  batchSize: number;
  /** Send once this many records wait... */
  dueRecords: number;
  /** ...or once the oldest waits this long. */
  dueAgeMs: number;
  /** At most this many requests per run; the rest stays for the next run. */
  maxBatches: number;
  /** After a failed send, no try before this has passed. */
  retryAfterMs: number;
  now: () => Date;
  /** Records the service would refuse (a damaged spool line) are dropped, not sent. */
  accept?: (record: AnalyticsRecord) => boolean;
  /** Why something was not sent (devtool.log only). */
  note: (message: string) => void;
}

export const DEFAULT_FLUSH: Omit<FlushOptions, 'now' | 'note'> = {
  batchSize: 100,
  dueRecords: 10,
  dueAgeMs: 10 * 60_000,
  maxBatches: 5,
  retryAfterMs: 10 * 60_000,
};

/**
 * `send` posts one batch; it throws `{ status }` 4xx when the service refuses the batch (dropped:
 * retrying would be refused again), anything else when it could not be sent (kept for later).
 */
export type SendBatch = (records: AnalyticsRecord[]) => Promise<void>;

/** True when a flush would send something now (cheap: reads the spool, no network). The failure marker holds the time of the last failed send. */
export function flushDue(spool: string, opts: Pick<FlushOptions, 'dueRecords' | 'dueAgeMs' | 'retryAfterMs' | 'now'>): boolean {
  const nowMs = opts.now().getTime();
  try {
    if (existsSync(failedMarker(spool))) {
      const failedAt = Date.parse(readFileSync(failedMarker(spool), 'utf8'));
      if (Number.isFinite(failedAt) && nowMs - failedAt < opts.retryAfterMs) return false;
    }
    if (!existsSync(spool)) return false;
    const lines = readFileSync(spool, 'utf8').split('\n').filter(Boolean);
    if (lines.length >= opts.dueRecords) return true;
    if (lines.length === 0) return false;
    let oldest = Number.NaN;
    try {
      oldest = Date.parse((JSON.parse(lines[0]!) as AnalyticsRecord).timestamp);
    } catch {
      return true; // a damaged line: the flush drops it
    }
    return !Number.isFinite(oldest) || nowMs - oldest >= opts.dueAgeMs;
  } catch {
    return false;
  }
}

/** Sends what is due; returns how many records the service accepted. Never throws. */
export async function flushSpool(spool: string, send: SendBatch, opts: FlushOptions): Promise<number> {
  const claim = `${spool}.${process.pid}.sending`;
  try {
    renameSync(spool, claim);
  } catch {
    return 0; // nothing spooled, or another process is sending it
  }
  let lines: string[];
  try {
    lines = readFileSync(claim, 'utf8').split('\n').filter(Boolean);
  } catch (err) {
    opts.note(`analytics: spool unreadable: ${(err as Error).message}`);
    rmSync(claim, { force: true });
    return 0;
  }
  const records = lines.flatMap((line) => {
    try {
      const r = JSON.parse(line) as AnalyticsRecord;
      return !opts.accept || opts.accept(r) ? [r] : [];
    } catch {
      return [];
    }
  });
  if (records.length < lines.length) opts.note(`analytics: ${lines.length - records.length} damaged record(s) dropped`);
  let sent = 0;
  let index = 0;
  try {
    for (let batch = 0; batch < opts.maxBatches && index < records.length; batch++) {
      const chunk = records.slice(index, index + opts.batchSize);
      try {
        await send(chunk);
        sent += chunk.length;
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status === undefined || status >= 500 || status === 401 || status === 429) throw err;
        opts.note(`analytics: ${chunk.length} record(s) refused by the service and dropped: ${(err as Error).message}`);
      }
      index += chunk.length;
    }
    rmSync(failedMarker(spool), { force: true });
  } catch (err) {
    opts.note(`analytics: not sent, kept for later: ${(err as Error).message}`);
    try {
      writeFileSync(failedMarker(spool), opts.now().toISOString(), { mode: 0o600 });
    } catch {
      /* the next run tries again sooner: harmless */
    }
  }
  // What was not sent goes back in front of what this run's command spooled meanwhile.
  const rest = records.slice(index);
  try {
    if (rest.length > 0) {
      const later = existsSync(spool) ? readFileSync(spool, 'utf8') : '';
      writeFileSync(spool, `${rest.map((r) => JSON.stringify(r)).join('\n')}\n${later}`, { mode: 0o600 });
    }
    rmSync(claim, { force: true });
  } catch (err) {
    opts.note(`analytics: spool not restored: ${(err as Error).message}`);
    try {
      appendFileSync(spool, readFileSync(claim, 'utf8'));
    } catch {
      /* records lost: analytics never fails a command */
    }
  }
  return sent;
}

function failedMarker(spool: string): string {
  return `${spool}.failed`;
}
