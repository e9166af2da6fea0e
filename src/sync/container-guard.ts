/**
 * What the dev container may not plant on this machine through sync, unless the service trusts it
 * (`trustContainer: true` in the manifest; docs/sync.md, "What the container cannot plant here"):
 *
 * - `.git`: a hook or a `core.fsmonitor` line written in the container would run on the next git
 *   command here. The container's Syncthing ignores every `.git` (it neither sends nor receives
 *   one); this machine's own `.stignore` is left alone, and its `.git` entries are simply not
 *   taken by the container (Syncthing marks them ignored there, which keeps completion at 100%).
 * - Links that point out of the synced folder (`/root/.ssh`, `../../..`): one arriving here is
 *   removed at once, and its path joins the container's ignore patterns, so the container keeps
 *   its link and never sends it again (kept across sessions in the state folder).
 * - Executable bits: the container's Syncthing ignores permissions (agent/README.md): a chmod
 *   there is never sent, and files it creates arrive here without execute bits. ContainerGuard
 *   keeps this machine deciding its own bits (docs/sync.md, "Permission bits").
 */
import { chmodSync, lstatSync, readFileSync, readlinkSync, rmSync, utimesSync } from 'node:fs';
import { join, posix } from 'node:path';
import { writeFileAtomic } from '../io/atomic-file.ts';
import type { SyncFolderPair } from './contract.ts';
import type { Versioning } from './rest.ts';

/** Ignore lines the container's Syncthing gets after the user's own: `(?d)` lets a folder holding one be deleted. */
export const UNTRUSTED_IGNORES = ['(?d).git'] as const;

/** Syncthing's glob characters, escaped so a path matches only itself (`\` escapes on Linux). */
function literalPattern(path: string): string {
  return `(?d)/${path.replace(/[\\*?[\]{}!]/g, (c) => `\\${c}`)}`;
}

/**
 * The ignore lines for the container's end: the user's `.stignore` lines first (Syncthing takes
 * the first matching line, so a user's `!.git` still wins), then, for an untrusted container,
 * `.git` and the links it was not allowed to place here.
 */
export function containerIgnoreLines(userLines: readonly string[], trusted: boolean, refusedLinks: readonly string[]): string[] {
  if (trusted) return [...userLines];
  return [...userLines, ...UNTRUSTED_IGNORES, ...refusedLinks.map(literalPattern)];
}

/**
 * Whether a link at `path` (folder-relative, `/`-separated) with `target` points out of the
 * folder: an absolute target always does (here it names this machine's files, whatever it meant
 * in the container), a relative one when it climbs above the folder's root.
 */
export function linkLeavesFolder(path: string, target: string): boolean {
  if (target.startsWith('/') || /^[A-Za-z]:[\\/]/.test(target)) return true;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target.replaceAll('\\', '/')));
  return resolved === '..' || resolved.startsWith('../');
}

/** The links refused so far for one dev environment, kept in its state folder. */
export class RefusedLinks {
  private readonly paths: Map<string, Set<string>>;

  constructor(private readonly file: string) {
    let saved: Record<string, string[]> = {};
    try {
      saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
    } catch {
      // none yet
    }
    this.paths = new Map(Object.entries(saved).map(([folder, list]) => [folder, new Set(list)]));
  }

  of(folderId: string): string[] {
    return [...(this.paths.get(folderId) ?? [])].sort();
  }

  /** Adds a path; false when it was known already. */
  add(folderId: string, path: string): boolean {
    const set = this.paths.get(folderId) ?? new Set<string>();
    if (set.has(path)) return false;
    set.add(path);
    this.paths.set(folderId, set);
    writeFileAtomic(this.file, JSON.stringify(Object.fromEntries([...this.paths].map(([k, v]) => [k, [...v].sort()])), null, 2), 0o600);
    return true;
  }
}

/** How long a file the container replaced or deleted here is kept in the trash. */
const TRASH_DAYS = 14;
/** A trashed version this recent is the one a pull just replaced, not an older one. */
const JUST_TRASHED_MS = 60_000;

/** What the guard needs of the session: the local Syncthing's entry of a file, and a way to resend the container's ignores. */
export interface GuardSession {
  readonly stateDir: string;
  localEntry(folderId: string, path: string): Promise<{ local?: { noPermissions?: boolean } }>;
  pushIgnores(f: SyncFolderPair): Promise<void>;
  notice(message: string): void;
}

/** The guard during an `up` session: what to tell each end, and what to do with what arrives. */
export class ContainerGuard {
  private readonly refused: RefusedLinks;

  constructor(private readonly s: GuardSession) {
    this.refused = new RefusedLinks(join(s.stateDir, 'refused-links.json'));
  }

  /** The ignore lines of the container's end, after `.stignore`'s `userLines`. */
  ignoreLines(f: SyncFolderPair, userLines: readonly string[]): string[] {
    return containerIgnoreLines(userLines, Boolean(f.trustContainer), this.refused.of(f.id));
  }

  /**
   * Every local file Syncthing replaces or deletes because of the container is moved to the
   * environment's trash first (`<state>/trash/<folder id>/<path>`, Syncthing's trash-can
   * versioning, kept TRASH_DAYS days or until `down`): an `rm -rf` in the container can be undone
   * here, and the mode of what a pull replaced is known (restoreExecBits).
   */
  trash(f: SyncFolderPair): Versioning {
    return { type: 'trashcan', fsPath: this.trashDir(f), fsType: 'basic', params: { cleanoutDays: String(TRASH_DAYS) }, cleanupIntervalS: 3600 };
  }

  private trashDir(f: SyncFolderPair): string {
    return join(this.s.stateDir, 'trash', f.id);
  }

  /** The local Syncthing finished pulling `item` from the container. */
  async pulled(f: SyncFolderPair, item: string, type: string): Promise<void> {
    if (f.trustContainer) return;
    if (type === 'symlink') await this.refuseLink(f, item);
    if (type === 'file') this.restoreExecBits(f, item);
  }

  /**
   * A link the container made that points out of its folder: the container's end ignores its path
   * from now on (so it keeps its link and sends it no more), then it is removed here. Ignored
   * first: removed first, the removal would reach the container.
   */
  private async refuseLink(f: SyncFolderPair, path: string): Promise<void> {
    let target: string;
    try {
      target = readlinkSync(join(f.local, path));
    } catch {
      return; // gone or not a link any more
    }
    if (!linkLeavesFolder(path, target)) return;
    this.refused.add(f.id, path);
    await this.s.pushIgnores(f);
    rmSync(join(f.local, path), { force: true });
    this.s.notice(
      `the dev container made the link ${path} -> ${target} in ${f.local}, which points out of the folder: not created here (the container keeps ` +
        `it; 'trustContainer: true' in the manifest allows such links)`,
    );
  }

  /**
   * A file the container changed arrives with Syncthing's default mode (its end ignores bits): a
   * script of this machine's edited there would lose its execute bits here. The version the pull
   * replaced was just moved to the trash: its bits come back.
   */
  private restoreExecBits(f: SyncFolderPair, item: string): void {
    const was = lstatSync(join(this.trashDir(f), item), { throwIfNoEntry: false });
    if (!was?.isFile() || (was.mode & 0o111) === 0 || Date.now() - was.ctimeMs > JUST_TRASHED_MS) return;
    const path = join(f.local, item);
    const now = lstatSync(path, { throwIfNoEntry: false });
    if (!now?.isFile() || (now.mode & 0o111) === (was.mode & 0o111)) return;
    chmodSync(path, (now.mode & 0o7777) | (was.mode & 0o111));
  }

  /**
   * Before our watcher's rescan of `path`: a `chmod +x` made here of a file the container wrote last
   * would not be sent, because its entry has no permission bits and Syncthing compares bits only
   * when both sides have them. Such a file gets a modification time one millisecond later, which
   * makes Syncthing record it anew, bits included.
   */
  async beforeScan(f: SyncFolderPair, path: string): Promise<void> {
    if (f.trustContainer) return;
    const abs = join(f.local, path);
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st?.isFile() || (st.mode & 0o111) === 0) return;
    // A whole millisecond past the old time, rounded up: a Date has no sub-millisecond part, and
    // new Date(mtimeMs + 1) could land below a time that had one (seen: 1 unit run in ~600).
    if ((await this.s.localEntry(f.id, path)).local?.noPermissions) utimesSync(abs, st.atime, new Date(Math.ceil(st.mtimeMs) + 1));
  }
}
