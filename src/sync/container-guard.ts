/**
 * What the dev container may not plant on this machine through sync, unless the service trusts it
 * (`trustContainer: true` in the manifest; docs/sync.md, "What the container cannot plant here").
 * This machine is the trusted end: each guard holds here, on what arrives, whatever the container
 * (which can read its own Syncthing's API key) makes its Syncthing send.
 *
 * - `.git`: a hook or a `core.fsmonitor` line written in the container would run on the next git
 *   command here. This machine's Syncthing, patched, neither takes nor sends any path with a
 *   `.git` or a `HEAD` component (a folder with a HEAD can be a bare repository to git) in a
 *   guarded folder (agent/README.md, "The Syncthing patches"; local-syncthing.ts names them). The container's Syncthing also ignores every `.git`, so
 *   that it does not offer what would be refused here.
 * - Executable bits: the same patch gives a file pulled here the execute bits this machine's file
 *   had, none for a new one, whatever bits the container sends. The container's Syncthing
 *   ignores permissions too (docs/sync.md, "Permission bits").
 * - Links that lead out of the synced folder (`/root/.ssh`, `../../..`, or a chain through other
 *   links): each link the container placed is resolved on this machine, following the links that
 *   exist here (link-target.ts), whenever a link arrives, since a later link can send an earlier
 *   one elsewhere. One that leads out is removed at once, and its path joins the container's
 *   ignore patterns, so the container keeps its link and, unless it drops its ignores, does not
 *   send it again (kept across sessions in the state folder).
 */
import { chmodSync, lstatSync, readFileSync, readlinkSync, realpathSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic-file.ts';
import type { SyncFolderPair } from './syncthing-config.ts';
import { isWithin, realPath } from './link-target.ts';
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

/** Paths of links per folder of one dev environment, kept in its state folder. */
export class FolderLinks {
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
    this.save();
    return true;
  }

  delete(folderId: string, path: string): void {
    if (this.paths.get(folderId)?.delete(path)) this.save();
  }

  private save(): void {
    writeFileAtomic(this.file, JSON.stringify(Object.fromEntries([...this.paths].map(([k, v]) => [k, [...v].sort()])), null, 2), 0o600);
  }
}

/** A link's target, or undefined for anything else (a file, a directory, nothing). */
function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
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
  /** Links refused here: the container's end ignores them. */
  private readonly refused: FolderLinks;
  /** Links the container placed here: each is checked again whenever another link arrives. */
  private readonly placed: FolderLinks;
  /** Folders where a link arrived since the last checkLinks. */
  private readonly linksArrived = new Map<string, SyncFolderPair>();

  constructor(private readonly s: GuardSession) {
    this.refused = new FolderLinks(join(s.stateDir, 'refused-links.json'));
    this.placed = new FolderLinks(join(s.stateDir, 'container-links.json'));
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
  pulled(f: SyncFolderPair, item: string, type: string): void {
    if (f.trustContainer) return;
    if (type === 'symlink') {
      this.placed.add(f.id, item);
      this.linksArrived.set(f.id, f);
    }
    if (type === 'file') this.restoreExecBits(f, item);
  }

  /**
   * After a batch of pulls: in each folder where a link arrived, every link the container placed
   * is resolved again (a new link can send an older one out of the folder: `esc ->
   * lnk/b/../../etc` placed before `lnk/b -> ..`).
   */
  async checkLinks(): Promise<void> {
    const folders = [...this.linksArrived.values()];
    this.linksArrived.clear();
    for (const f of folders) {
      const root = realpathSync(f.local);
      for (const path of this.placed.of(f.id)) {
        const target = readLink(join(f.local, path));
        if (target === undefined) {
          this.placed.delete(f.id, path);
          continue;
        }
        const leadsTo = realPath(join(root, path), readLink);
        if (leadsTo === undefined || !isWithin(root, leadsTo)) await this.refuseLink(f, path, target);
      }
    }
  }

  /**
   * A link the container made that leads out of its folder: the container's end ignores its path
   * from now on (so it keeps its link and sends it no more), then it is removed here. Ignored
   * first: removed first, the removal would reach the container.
   */
  private async refuseLink(f: SyncFolderPair, path: string, target: string): Promise<void> {
    this.refused.add(f.id, path);
    await this.s.pushIgnores(f);
    rmSync(join(f.local, path), { force: true });
    this.placed.delete(f.id, path);
    this.s.notice(
      `the dev container made the link ${path} -> ${target} in ${f.local}, which leads out of the folder: not created here (the container keeps ` +
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
