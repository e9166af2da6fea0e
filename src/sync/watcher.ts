/**
 * The CLI's own watcher on the local synced folders: every change is passed to the local
 * Syncthing as a rescan of just that path, at once, so a save reaches the dev container without
 * waiting for Syncthing's own watcher (which batches for at least a second). Syncthing's watcher
 * and its periodic rescan stay on as a safety net.
 *
 * Folders named in the first lines of `.stignore` (plain names like `node_modules`, `/build`)
 * are not watched: they would only cost inotify watches, the scarce resource of big trees.
 */
import { existsSync, readFileSync } from 'node:fs';
import { DevtoolError } from '../base/errors.ts';
import { readInputFile } from '../io/input-file.ts';
import { basename, relative, sep } from 'node:path';
import type { FSWatcher } from 'chokidar';
import type { SyncFolderPair } from './contract.ts';
import { MAX_SCAN_PATHS } from './rest.ts';

/** Changes are collected this long before one scan request: an editor's save is several events. */
const DEBOUNCE_MS = 10;
/**
 * chokidar reports a path at most once in 50 ms (its change throttle, index.js `_throttle(CHANGE,
 * path, 50)`): a second write in that window is dropped, not delayed, and would wait for
 * Syncthing's own watcher (over a second). So the paths of each batch are scanned once more after
 * that window; a scan that finds nothing changed costs Syncthing a stat.
 */
const FOLLOW_UP_MS = 50;

export interface WatcherOptions {
  scan(folderId: string, subs: string[]): Promise<void>;
  /** The folder's `.stignore` changed: the remote end must get the new patterns. */
  ignoresChanged(folder: SyncFolderPair): void;
  warn(message: string): void;
}

export class LocalWatcher {
  private watchers: FSWatcher[] = [];
  private pending = new Map<string, Set<string>>();
  private timer?: NodeJS.Timeout;
  private followUps = new Map<string, Set<string>>();
  private followUpTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly folders: readonly SyncFolderPair[],
    private readonly o: WatcherOptions,
  ) {}

  async start(): Promise<void> {
    const { watch } = await import('chokidar');
    for (const folder of this.folders) {
      if (this.closed) return;
      const skip = plainIgnores(folder.local);
      const w = watch(folder.local, {
        ignoreInitial: true,
        followSymlinks: false,
        ignored: (path: string) => {
          const rel = relative(folder.local, path);
          if (rel === '' || rel.startsWith('..')) return false;
          const name = basename(path);
          return name === '.stfolder' || name === '.stversions' || name.startsWith('.syncthing.') || skip.has(name) || skip.has(`/${rel.split(sep)[0]}`);
        },
      });
      w.on('all', (_event, path) => this.changed(folder, path));
      w.on('error', (err) => {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOSPC' || code === 'EMFILE') {
          this.o.warn(
            `the local file watcher ran out of inotify watches for ${folder.local}: raise fs.inotify.max_user_watches (sysctl), or ignore big ` +
              `folders in .stignore; changes are still found by the periodic rescan`,
          );
        }
      });
      // Kept before it is ready: a close() during the initial walk of a big tree must close it
      // too, or its inotify handle keeps the process alive after `up` has ended.
      this.watchers.push(w);
      await new Promise<void>((resolve) => w.once('ready', () => resolve()));
    }
  }

  private changed(folder: SyncFolderPair, path: string): void {
    const rel = relative(folder.local, path).split(sep).join('/');
    if (rel === '.stignore') this.o.ignoresChanged(folder);
    let subs = this.pending.get(folder.id);
    if (!subs) {
      subs = new Set();
      this.pending.set(folder.id, subs);
    }
    subs.add(rel);
    this.timer ??= setTimeout(() => this.flush(), DEBOUNCE_MS);
  }

  private flush(): void {
    this.timer = undefined;
    const batches = [...this.pending];
    this.pending.clear();
    for (const [id, subs] of batches) {
      // Many paths become one scan of the whole folder (SyncthingApi.scan): no second one of those.
      void this.o.scan(id, [...subs]).catch(() => undefined);
      if (subs.size <= MAX_SCAN_PATHS) this.followUp(id, subs);
    }
  }

  private followUp(id: string, subs: Set<string>): void {
    const all = this.followUps.get(id);
    if (all) for (const s of subs) all.add(s);
    else this.followUps.set(id, new Set(subs));
    this.followUpTimer ??= setTimeout(() => {
      this.followUpTimer = undefined;
      const batches = [...this.followUps];
      this.followUps.clear();
      for (const [folder, paths] of batches) void this.o.scan(folder, [...paths]).catch(() => undefined);
    }, FOLLOW_UP_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.followUpTimer);
    await Promise.all(this.watchers.map((w) => w.close()));
    this.watchers = [];
  }
}

/** The lines of `.stignore` that are plain names or root-anchored names (no wildcards). */
export function plainIgnores(folder: string): Set<string> {
  let text = '';
  try {
    text = readFileSync(`${folder}/.stignore`, 'utf8');
  } catch {
    return new Set();
  }
  return new Set(
    text
      .split('\n')
      .map((l) => l.trim().replace(/\/+$/, ''))
      .filter(
        (l) => l && !l.startsWith('//') && !l.startsWith('#') && !l.startsWith('!') && !l.startsWith('(') && !/[*?[\]{}]/.test(l) && !l.slice(1).includes('/'),
      ),
  );
}

/** The patterns of a folder's `.stignore`, as the remote end must get them ([] when there is none; too large: an error). */
export function readIgnoreLines(folder: string): string[] {
  const file = `${folder}/.stignore`;
  const text = readInputFile(file, 'stignore');
  if (text === undefined && existsSync(file)) throw new DevtoolError(`cannot read ${file}: the dev container's end must get its patterns`);
  return (text ?? '')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '');
}
