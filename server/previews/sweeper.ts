/**
 * What moves previews on when nobody asks: every replica, every sweep interval, goes through the
 * previews once. A destroy asked for without --wait gets its namespace deleted once its run has
 * ended; a preview nobody redeployed for longer than the chart's `previews.staleAfter` is
 * destroyed. Replicas sweeping at once do no harm: starting a run is guarded by its record's
 * resourceVersion (one wins, the other gets a 409 and moves on), deleting a namespace twice is
 * nothing.
 */
import type { NamespaceRecord } from '../store/store.ts';
import { refresh } from '../pipelines/runs.ts';
import { advanceDestroy, type PreviewDeps } from './previews.ts';

export interface SweepSettings {
  /** Previews not redeployed for this long are destroyed; undefined: never (the default). */
  staleAfterMs?: number;
  /** The destroy run's deadline. */
  timeoutSeconds: number;
}

export interface SweepReport {
  /** Previews whose destroy moved on (run started or namespace deleted). */
  advanced: string[];
  /** Stale previews whose destroy this sweep started. */
  stale: string[];
  /** Previews the sweep could not handle, with why. */
  failed: { name: string; error: string }[];
}

/** "3d 4h" for a duration, to say in a preview's message why it went. */
export function humanDuration(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  if (h >= 48) return `${Math.floor(h / 24)}d${h % 24 ? ` ${h % 24}h` : ''}`;
  if (h >= 1) return `${h}h`;
  return `${Math.max(1, Math.round(ms / 60_000))}m`;
}

export async function sweepPreviews(deps: PreviewDeps, s: SweepSettings): Promise<SweepReport> {
  const report: SweepReport = { advanced: [], stale: [], failed: [] };
  const now = deps.now();
  for (const p of await deps.store.listPreviews()) {
    if (p.status === 'Terminating') continue;
    try {
      if (p.preview!.destroyRequestedAt) {
        // A destroy that failed stays as it is (its owner sees why): not counted.
        const after = await advanceDestroy(deps, p, { timeoutSeconds: s.timeoutSeconds, retryFailed: false });
        if (after.status === 'destroying') report.advanced.push(p.name);
      } else if (s.staleAfterMs !== undefined && now.getTime() - Date.parse(p.preview!.deployedAt) > s.staleAfterMs) {
        if (await runGoingOn(deps, p)) continue;
        const idle = humanDuration(now.getTime() - Date.parse(p.preview!.deployedAt));
        const reason = `destroyed: not redeployed for ${idle} (the service destroys previews after ${humanDuration(s.staleAfterMs)})`;
        if (!(await deps.store.updatePreview(p.name, { destroyRequestedAt: now.toISOString(), destroyReason: reason }))) continue;
        const marked: NamespaceRecord = { ...p, preview: { ...p.preview!, destroyRequestedAt: now.toISOString(), destroyReason: reason } };
        await advanceDestroy(deps, marked, { timeoutSeconds: s.timeoutSeconds, retryFailed: false });
        report.stale.push(p.name);
      }
    } catch (err) {
      report.failed.push({ name: p.name, error: (err as Error).message });
    }
  }
  return report;
}

/** A preview being deployed is not stale, whatever its last deploy's date says. */
async function runGoingOn(deps: PreviewDeps, p: NamespaceRecord): Promise<boolean> {
  const { cluster } = await deps.actAs(p.owner);
  const found = await refresh(cluster, p.name, p.preview!.pipeline, deps.now());
  return found?.record.status === 'progressing' || found?.record.status === 'destroying';
}
