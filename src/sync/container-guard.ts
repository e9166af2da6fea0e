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
 *   there is never sent, and files it creates arrive here without execute bits.
 */
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { writeFileAtomic } from '../io/atomic-file.ts';

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
