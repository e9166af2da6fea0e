/**
 * What the file sync is doing, in one word and a few counts, from the local Syncthing's events
 * (FileSync.followEvents passes them in): watching (both ends have everything), syncing (files
 * still to receive or to send), or an error and its one line. One entry per folder of the session,
 * replaced by each event: a long `up` holds no history.
 */
import { oneLine } from '../base/text.ts';
import type { SyncEvent } from './rest.ts';

export type SyncActivity = { state: 'watching' } | { state: 'syncing'; toReceive: number; toSend: number } | { state: 'error'; error: string };

/** The event types the view reads (subscribed to by FileSync.followEvents). */
export const ACTIVITY_EVENTS = ['StateChanged', 'FolderSummary', 'FolderCompletion', 'FolderErrors'] as const;

/** Folder states in which Syncthing is moving files (a scan alone is not: it follows every save). */
const MOVING = new Set(['syncing', 'sync-preparing', 'sync-waiting', 'cleaning']);

interface FolderView {
  state: string;
  toReceive: number;
  toSend: number;
  /** The folder stopped (Syncthing's state "error", e.g. its marker is gone). */
  folderError?: string;
  /** Items that could not be pulled, said as one line. */
  pullError?: string;
}

export interface ActivityFolder {
  id: string;
  /** How the folder is named to people (./src). */
  label: string;
  /** A send-only folder never receives: what the container changed is not counted as to receive. */
  sendOnly: boolean;
}

export class SyncActivityView {
  private readonly folders = new Map<string, FolderView & ActivityFolder>();
  private last: string;

  constructor(
    folders: readonly ActivityFolder[],
    private readonly remoteDevice: string,
  ) {
    for (const f of folders) this.folders.set(f.id, { ...f, state: 'idle', toReceive: 0, toSend: 0 });
    this.last = JSON.stringify(this.activity());
  }

  /** Takes one event of the local Syncthing; true when the activity it gives has changed. */
  apply(e: Pick<SyncEvent, 'type' | 'data'>): boolean {
    const f = this.folders.get(String(e.data.folder));
    if (!f) return false;
    const d = e.data;
    switch (e.type) {
      case 'StateChanged':
        f.state = String(d.to);
        f.folderError = d.to === 'error' ? oneLine(String(d.error ?? 'the folder stopped')) : undefined;
        break;
      case 'FolderSummary': {
        const s = (d.summary ?? {}) as Record<string, unknown>;
        if (typeof s.state === 'string') f.state = s.state;
        f.toReceive = f.sendOnly ? 0 : count(s.needTotalItems ?? count(s.needFiles) + count(s.needDirectories) + count(s.needSymlinks) + count(s.needDeletes));
        if (count(s.pullErrors) === 0) f.pullError = undefined;
        break;
      }
      case 'FolderCompletion':
        if (d.device === this.remoteDevice) f.toSend = count(d.needItems) + count(d.needDeletes);
        break;
      case 'FolderErrors': {
        const errors = Array.isArray(d.errors) ? (d.errors as { path?: unknown; error?: unknown }[]) : [];
        const first = errors[0];
        f.pullError = first ? `${errors.length} item(s) not synced, first ${String(first.path)}: ${oneLine(String(first.error))}` : undefined;
        break;
      }
      default:
        return false;
    }
    const now = JSON.stringify(this.activity());
    if (now === this.last) return false;
    this.last = now;
    return true;
  }

  activity(): SyncActivity {
    const views = [...this.folders.values()];
    const failing = views.find((f) => f.folderError ?? f.pullError);
    if (failing) return { state: 'error', error: `${failing.label}: ${failing.folderError ?? failing.pullError}` };
    const toReceive = views.reduce((n, f) => n + f.toReceive, 0);
    const toSend = views.reduce((n, f) => n + f.toSend, 0);
    if (toReceive + toSend > 0 || views.some((f) => MOVING.has(f.state))) return { state: 'syncing', toReceive, toSend };
    return { state: 'watching' };
  }
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}
