/**
 * The CLI's own watcher on the local synced folders: every change is passed to the local
 * Syncthing as a rescan of just that path, at once, so a save reaches the dev container without
 * waiting for Syncthing's own watcher (which batches for at least a second). Syncthing's watcher
 * and its periodic rescan stay on as a safety net.
 *
 * One inotify watch per folder (fs.watch on a directory reports what happens to its entries), none
 * per file: a general-purpose watcher (chokidar) also watches every file, which for 40,000 files
 * cost 300 MB of memory and 40,000 watches (docs/sync.md, "Big trees"). Folders named in
 * `.stignore` as plain names (`node_modules`, `/build`) are not entered: they would only cost
 * watches, the scarce resource of big trees.
 */
import { existsSync, type FSWatcher, readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { DevtoolError } from '../base/errors.ts';
import { textLines, watchLimit } from '../base/platform.ts';
import { readInputFile } from '../io/input-file.ts';
import { join, relative, sep } from 'node:path';
import type { SyncFolderPair } from './syncthing-config.ts';

/** Changes are collected this long before one scan request: an editor's save is several events. */
const DEBOUNCE_MS = 10;

export interface WatcherOptions {
  scan(folderId: string, subs: string[]): Promise<void>;
  /** The folder's `.stignore` changed: the remote end must get the new patterns. */
  ignoresChanged(folder: SyncFolderPair): void;
  warn(message: string): void;
}

export class LocalWatcher {
  /** Watched directories (absolute) of every folder. */
  private watchers = new Map<string, FSWatcher>();
  private pending = new Map<string, Set<string>>();
  private timer?: NodeJS.Timeout;
  private closed = false;
  private warned = false;

  constructor(
    private readonly folders: readonly SyncFolderPair[],
    private readonly o: WatcherOptions,
  ) {}

  async start(): Promise<void> {
    for (const folder of this.folders) {
      const skip = plainIgnores(folder.local);
      // One directory per turn of the event loop at most 200 at a time: a big tree's walk must not
      // hold up the session's other work (and a close() during it stops it).
      const queue = [folder.local];
      for (let n = 0; queue.length; n++) {
        if (this.closed) return;
        if (n % 200 === 199) await new Promise((r) => setImmediate(r));
        this.watchDir(folder, skip, queue.shift()!, queue);
      }
    }
  }

  /** Watches `dir` and queues its subfolders (all of them when `queue` is omitted, at once). */
  private watchDir(folder: SyncFolderPair, skip: Set<string>, dir: string, queue?: string[]): void {
    if (this.closed || this.watchers.has(dir)) return;
    let w: FSWatcher;
    try {
      w = watch(dir, { persistent: true }, (_event, name) => {
        if (name) this.event(folder, skip, join(dir, name.toString()));
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === 'ENOSPC' || code === 'EMFILE') && !this.warned) {
        this.warned = true;
        this.o.warn(
          `the local file watcher ran out of ${watchLimit().what} for ${folder.local}: ${watchLimit().raise}, or ignore big ` +
            `folders in .stignore; changes are still found by the periodic rescan`,
        );
      }
      return; // gone already (ENOENT), or not watchable: the periodic rescan covers it
    }
    // The directory was deleted or moved away: its watch ends (a new one comes with its new name).
    w.on('error', () => this.unwatch(dir));
    this.watchers.set(dir, w);
    let entries: string[] = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !ignoredPath(folder.local, skip, join(dir, e.name)))
        .map((e) => join(dir, e.name));
    } catch {
      // deleted meanwhile: its watcher reports that
    }
    if (queue) queue.push(...entries);
    else for (const sub of entries) this.watchDir(folder, skip, sub);
  }

  private unwatch(dir: string): void {
    for (const [path, w] of this.watchers) {
      if (path === dir || path.startsWith(`${dir}${sep}`)) {
        w.close();
        this.watchers.delete(path);
      }
    }
  }

  private event(folder: SyncFolderPair, skip: Set<string>, path: string): void {
    if (this.closed || ignoredPath(folder.local, skip, path)) return;
    // A directory created or moved in is watched with all it holds (the scan of its path covers
    // what was written there before the watch); one deleted or moved away is dropped.
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      if (this.watchers.has(path)) this.unwatch(path);
    }
    if (isDir && !this.watchers.has(path)) this.watchDir(folder, skip, path);
    this.changed(folder, path);
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
      // Many paths become one scan of the whole folder (SyncthingApi.scan).
      void this.o.scan(id, [...subs]).catch(() => undefined);
    }
  }

  /** How many directories are watched (one inotify watch each). */
  get watchedDirs(): number {
    return this.watchers.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}

/** Syncthing's own files, and what a plain `.stignore` name covers (the name itself or a top folder for `/name`). */
function ignoredPath(root: string, skip: Set<string>, path: string): boolean {
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..')) return false;
  const parts = rel.split(sep);
  const name = parts[parts.length - 1]!;
  if (name === '.stfolder' || name === '.stversions' || name.startsWith('.syncthing.') || name.startsWith('~syncthing~')) return true;
  return parts.some((p) => skip.has(p)) || skip.has(`/${parts[0]}`);
}

/** The plain names of a folder's `.stignore` (plainIgnoreNames); none without one. */
export function plainIgnores(folder: string): Set<string> {
  try {
    return plainIgnoreNames(readFileSync(`${folder}/.stignore`, 'utf8'));
  } catch {
    return new Set();
  }
}

/**
 * The lines of a `.stignore` that are plain names or root-anchored names (no wildcards), after
 * Syncthing's `(?d)` and `(?i)` prefixes (`(?d)node_modules` is still node_modules; under `(?i)` the
 * name as written is ignored too). As the agent's rescanner reads them: Syncthing applies the first
 * pattern that matches, so reading stops at the first negation (`!keep` may re-include something
 * below a later name) and at the first `#include` (its file may hold negations).
 */
export function plainIgnoreNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/^(\(\?[di]\)){1,2}/, '');
    if (!line || line.startsWith('//')) continue;
    if (line.startsWith('!') || line.startsWith('#include')) break;
    const name = line.replace(/\/+$/, '');
    if (name && !name.startsWith('#') && !name.startsWith('(') && !/[*?[\]{}\\]/.test(name) && !name.slice(1).includes('/')) names.add(name);
  }
  return names;
}

/** The patterns of a folder's `.stignore`, as the remote end must get them ([] when there is none; too large: an error). */
export function readIgnoreLines(folder: string): string[] {
  const file = `${folder}/.stignore`;
  const text = readInputFile(file, 'stignore');
  if (text === undefined && existsSync(file)) throw new DevtoolError(`cannot read ${file}: the dev container's end must get its patterns`);
  return textLines(text ?? '').filter((l) => l.trim() !== '');
}
