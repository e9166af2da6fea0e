/**
 * The few calls of Syncthing's REST API that devtool makes, on either end (the remote one through
 * the SSH tunnel). Every call is bounded: a stuck tunnel must not hang `up` or `status`.
 */
import type { SyncthingPaths } from '../base/platform.ts';
import { waitUntil } from '../base/wait.ts';

export interface Completion {
  /** 0-100 */
  completion: number;
  globalBytes: number;
  needBytes: number;
  needItems: number;
  needDeletes: number;
}

export interface FolderStatus {
  state: string;
  globalFiles: number;
  globalBytes: number;
  localFiles: number;
  localBytes: number;
  needFiles: number;
  needBytes: number;
  errors: number;
  pullErrors: number;
  /** Items this end needs (the puller's work left). */
  needTotalItems?: number;
  /** Items changed here while the folder is receive-only (not announced, `/rest/db/localchanged`). */
  receiveOnlyTotalItems?: number;
  /** Deleted entries in this end's own index (the paths it records as deleted). */
  localDeleted?: number;
  /** The highest sequence number of this end's own changes to the folder. */
  sequence: number;
  /** The highest sequence number of each peer's changes this end has received, by device ID. */
  remoteSequence?: Record<string, number> | null;
}

/** A path as Syncthing lists it (`/rest/db/need`): the global version this end does not have. */
export interface NeedItem {
  name: string;
  /** `FILE_INFO_TYPE_FILE`, `FILE_INFO_TYPE_DIRECTORY` or `FILE_INFO_TYPE_SYMLINK`. */
  type: string;
  deleted?: boolean;
  size?: number;
  /** RFC 3339 with nanoseconds. */
  modified?: string;
  noPermissions?: boolean;
  /** Octal, e.g. `0644`. */
  permissions?: string;
  /** The version vector, `SHORTID:counter` per device that changed it. */
  version?: string[];
  /** The short ID of the device that made this version. */
  modifiedBy?: string;
}

/** Past this many paths one scan of the whole folder is cheaper than a query listing them (one walk beats a huge query). */
export const MAX_SCAN_PATHS = 200;

/** Items per page of `/rest/db/need`. */
const NEED_PAGE = 1000;

export type FolderType = 'sendonly' | 'sendreceive' | 'receiveonly';

/** A folder's file versioning (Syncthing's `versioning` folder setting). */
export interface Versioning {
  type: 'trashcan';
  /** Where replaced and deleted files go. */
  fsPath: string;
  fsType: 'basic';
  params: { cleanoutDays: string };
  cleanupIntervalS: number;
}

export interface SyncEvent {
  id: number;
  type: string;
  time: string;
  data: Record<string, unknown>;
}

/** A Syncthing on Linux: its paths are devtool's. */
const SAME_PATHS: SyncthingPaths = { toSyncthing: (p) => p, fromSyncthing: (p) => p };

export class SyncthingApi {
  constructor(
    private readonly url: string,
    private readonly apiKey: string,
    /** How this Syncthing writes folder-relative paths (the local one's: syncthingPaths()). */
    protected readonly paths: SyncthingPaths = SAME_PATHS,
  ) {}

  /** Where the REST API is (LocalSyncthingApi finds it anew: its port changes with every start). */
  get baseUrl(): string {
    return this.url;
  }

  async request<T>(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { 'X-API-Key': this.apiKey, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.trim().slice(0, 200)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Resolves once the API answers, retrying until `timeoutMs`; `signal` ends the wait early (its
   * owner gave up: a pending wait keeps the process alive).
   */
  async waitReady(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const ping = async () => {
      signal?.throwIfAborted();
      await this.request('GET', '/rest/system/ping', undefined, 2_000);
      return true;
    };
    await waitUntil(ping, {
      timeoutMs,
      intervalMs: 200,
      retry: () => !signal?.aborted,
      timedOut: (last) =>
        new Error(`the sync service at ${this.baseUrl} did not answer within ${Math.round(timeoutMs / 1000)}s${last ? ` (${(last as Error).message})` : ''}`),
    });
  }

  /** How much of the folder's global state `device` has (default: this end). */
  completion(folder: string, device?: string): Promise<Completion> {
    const q = new URLSearchParams({ folder, ...(device ? { device } : {}) });
    return this.request('GET', `/rest/db/completion?${q}`);
  }

  status(folder: string): Promise<FolderStatus> {
    return this.request('GET', `/rest/db/status?folder=${encodeURIComponent(folder)}`);
  }

  /**
   * Everything this end still needs of the folder, every page of it. Each page is read from the
   * index as it is then: read through readSettled (exchange.ts) for a list of one moment.
   */
  need(folder: string): Promise<NeedItem[]> {
    type Page = { progress: NeedItem[] | null; queued: NeedItem[] | null; rest: NeedItem[] | null };
    return this.pages<Page>('/rest/db/need', { folder }, (r) => [...(r.progress ?? []), ...(r.queued ?? []), ...(r.rest ?? [])]);
  }

  /**
   * What changed here while the folder is receive-only (its own versions, never announced), every
   * page of it (`/rest/db/localchanged`).
   */
  localChanged(folder: string): Promise<NeedItem[]> {
    return this.pages<{ files: NeedItem[] | null }>('/rest/db/localchanged', { folder }, (r) => r.files ?? []);
  }

  /** What `device` lacks of the folder as this end sees it, `perpage` names per page, up to `pages` pages (`/rest/db/remoteneed`). */
  async remoteNeed(folder: string, device: string, o: { perpage?: number; pages?: number } = {}): Promise<string[]> {
    const items = await this.pages<{ files: NeedItem[] | null }>('/rest/db/remoteneed', { folder, device }, (r) => r.files ?? [], o);
    return items.map((i) => i.name);
  }

  /** A paged list of the REST API, page after page until a short one (or `o.pages` of them). */
  private async pages<R>(
    path: string,
    params: Record<string, string>,
    itemsOf: (r: R) => NeedItem[],
    o: { perpage?: number; pages?: number } = {},
  ): Promise<NeedItem[]> {
    const perpage = o.perpage ?? NEED_PAGE;
    const all: NeedItem[] = [];
    for (let page = 1; page <= (o.pages ?? Infinity); page++) {
      const q = new URLSearchParams({ ...params, page: String(page), perpage: String(perpage) });
      const items = itemsOf(await this.request<R>('GET', `${path}?${q}`, undefined, 60_000));
      all.push(...items.map((i) => this.item(i)));
      if (items.length < perpage) break;
    }
    return all;
  }

  /** This end's entry of a file, and the global one (`/rest/db/file`). */
  async file(folder: string, name: string): Promise<{ local?: NeedItem; global?: NeedItem }> {
    const r = await this.request<{ local?: NeedItem; global?: NeedItem }>(
      'GET',
      `/rest/db/file?${new URLSearchParams({ folder, file: this.paths.toSyncthing(name) })}`,
    );
    return { ...r, ...(r.local ? { local: this.item(r.local) } : {}), ...(r.global ? { global: this.item(r.global) } : {}) };
  }

  private item(i: NeedItem): NeedItem {
    return { ...i, name: this.paths.fromSyncthing(i.name) };
  }

  /**
   * Rescans the given paths (relative to the folder) now, or the whole folder with none or more
   * than MAX_SCAN_PATHS of them; resolves once indexed. A first scan hashes every file: 40,000
   * files / 430 MB took a minute on a busy machine, so whole-folder scans pass a longer wait.
   */
  scan(folder: string, subs: readonly string[] = [], timeoutMs = 60_000): Promise<void> {
    const q = new URLSearchParams({ folder });
    if (subs.length <= MAX_SCAN_PATHS) for (const s of subs) q.append('sub', this.paths.toSyncthing(s));
    return this.request('POST', `/rest/db/scan?${q}`, undefined, timeoutMs);
  }

  setFolderType(folder: string, type: FolderType): Promise<void> {
    return this.patchFolder(folder, { type });
  }

  folderConfig(folder: string): Promise<{ type: FolderType; paused: boolean }> {
    return this.request('GET', `/rest/config/folders/${encodeURIComponent(folder)}`);
  }

  /**
   * Changes folder settings; Syncthing restarts the folder (a paused one neither scans nor pulls).
   * Not Syncthing's PATCH: it decodes the patch into the folder after resetting every field that
   * has a default (v1.30's FolderConfiguration.UnmarshalJSON), so `{type}` alone also put back
   * maxConflicts 10, rescanIntervalS 3600 and fsWatcherDelayS 10 over the agent configuration's. The whole
   * folder is read, changed and written back instead (only devtool changes these folders).
   */
  async patchFolder(folder: string, patch: { type?: FolderType; paused?: boolean; versioning?: Versioning }): Promise<void> {
    const path = `/rest/config/folders/${encodeURIComponent(folder)}`;
    const whole = await this.request<Record<string, unknown>>('GET', path);
    await this.request('PUT', path, { ...whole, ...patch });
  }

  /** New addresses for a device: Syncthing dials a changed address at once (its connection loop otherwise sleeps 5 s or more). */
  setDeviceAddresses(device: string, addresses: readonly string[]): Promise<void> {
    return this.request('PATCH', `/rest/config/devices/${encodeURIComponent(device)}`, { addresses });
  }

  setIgnores(folder: string, lines: readonly string[]): Promise<void> {
    return this.request('POST', `/rest/db/ignores?folder=${encodeURIComponent(folder)}`, { ignore: lines });
  }

  /** Whether the peer is connected right now. */
  async connected(device: string): Promise<boolean> {
    const r = await this.request<{ connections: Record<string, { connected: boolean }> }>('GET', '/rest/system/connections');
    return Boolean(r.connections?.[device]?.connected);
  }

  /** Long-polls events after `since` (Syncthing answers after `timeoutS` with none). */
  async events(since: number, types: readonly string[], timeoutS = 30): Promise<SyncEvent[]> {
    const q = new URLSearchParams({ since: String(since), timeout: String(timeoutS), events: types.join(',') });
    const events = await this.request<SyncEvent[]>('GET', `/rest/events?${q}`, undefined, (timeoutS + 10) * 1000);
    const path = (p: unknown) => (typeof p === 'string' ? this.paths.fromSyncthing(p) : p);
    return events.map((e) => {
      const data = { ...e.data };
      if ('item' in data) data.item = path(data.item);
      if (Array.isArray(data.filenames)) data.filenames = data.filenames.map(path);
      return { ...e, data };
    });
  }

  async folderErrors(folder: string): Promise<{ errors: { path: string; error: string }[] | null }> {
    const r = await this.request<{ errors: { path: string; error: string }[] | null }>('GET', `/rest/folder/errors?folder=${encodeURIComponent(folder)}`);
    return { ...r, errors: r.errors?.map((e) => ({ ...e, path: this.paths.fromSyncthing(e.path) })) ?? null };
  }
}
