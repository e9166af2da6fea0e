/**
 * Which host folders a dev container may synchronize. By default only the project's: the folder of
 * the manifest (or of the Compose file), widened to the root of the git repository holding it,
 * unless that root is the home directory or `/` (a dotfiles repository would make the whole home
 * "the project"). A folder outside needs the service's `syncOutsideProject: true`; `/`, the home
 * directory and the folders holding it or the project are never synchronized. Paths are compared
 * with symlinks resolved, so `./link-to-home` is the home directory, not a folder of the project.
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { userHome } from '../base/platform.ts';

/** The service field that lets a sync folder lie outside the project (docs/manifest.md). */
export const SYNC_OUTSIDE_FIELD = 'syncOutsideProject';

export interface ProjectScope {
  /** The manifest's (or Compose file's) folder, as given: relative sync paths start here. */
  readonly folder: string;
  /** The project, symlinks resolved; undefined when the folder is the home directory or holds it. */
  readonly root: string | undefined;
  /** The home directory, symlinks resolved. */
  readonly home: string;
}

/** Refused: `outside` can be allowed with the opt-in, `never` cannot. */
export interface SyncRefusal {
  readonly kind: 'outside' | 'never';
  /** Why, as the end of a sentence about the path: "is outside the project (/p)". */
  readonly reason: string;
  /** Where a symlink on the way led (not said for a link to the project itself). */
  readonly resolved?: string;
}

export function projectScope(folder: string, home: string = userHome(process.env)): ProjectScope {
  const real = realPath(folder);
  const realHome = realPath(home);
  if (isWithin(realHome, real)) return { folder, root: undefined, home: realHome };
  const git = gitRoot(real);
  // A repository at the home directory (dotfiles) or above it is no project boundary.
  const root = git !== undefined && !isWithin(realHome, git) ? git : real;
  return { folder, root, home: realHome };
}

/** Why `local` (relative to the scope's folder, or absolute) may not be synchronized; undefined when it may. */
export function syncRefusal(scope: ProjectScope, local: string, allowOutside: boolean): SyncRefusal | undefined {
  const real = realPath(resolve(scope.folder, local));
  const refuse = (kind: SyncRefusal['kind'], reason: string): SyncRefusal =>
    real === resolve(realPath(scope.folder), local) ? { kind, reason } : { kind, reason, resolved: real };
  // `/`, or on Windows a drive's root (`C:\`) or a share's.
  if (dirname(real) === real) return refuse('never', 'is the root of the file system, which is never synchronized');
  if (real === scope.home) return refuse('never', 'is the home directory, which is never synchronized (it holds SSH keys and cloud credentials)');
  if (isWithin(scope.home, real)) return refuse('never', 'holds the home directory, which is never synchronized');
  if (scope.root === undefined)
    return allowOutside ? undefined : refuse('outside', 'is outside any project: the manifest is in the home directory, which is no project');
  if (isWithin(real, scope.root)) return undefined;
  if (isWithin(scope.root, real)) return refuse('never', `holds the whole project (${scope.root}): synchronize the folders the container needs`);
  return allowOutside ? undefined : refuse('outside', `is outside the project (${scope.root})`);
}

/** `path` for people: ./src inside `base`, ~/.ssh inside the home directory, else absolute. */
export function showPath(path: string, base: string, home: string = userHome(process.env)): string {
  const abs = resolve(base, path);
  if (isWithin(abs, base)) return abs === base ? '.' : `./${relative(base, abs)}`;
  if (isWithin(abs, home)) return abs === home ? '~' : `~/${relative(home, abs)}`;
  return abs;
}

function isWithin(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** The nearest folder from `start` up with a `.git` entry (a folder, or a worktree's file). */
function gitRoot(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** realpath, also for a path that does not exist yet: its nearest existing parent resolved. */
function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPath(parent), basename(path));
  }
}
