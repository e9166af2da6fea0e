/**
 * The environment name: `--name`, else the repository name (the last part of the `origin`
 * remote's URL, read from .git/config: no git process needed), else the folder name. It becomes a
 * Kubernetes label value and part of object names, so it is made a DNS-1123 label.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../base/errors.ts';
import { toDnsLabel } from '../kube/naming.ts';

export function environmentName(explicit: string | undefined, folder: string): string {
  if (explicit !== undefined) {
    const name = sanitizeName(explicit);
    if (!name) throw new UsageError(`invalid value "${explicit}" for flag --name: use letters, digits and '-'`);
    return name;
  }
  return sanitizeName(repositoryName(folder) ?? basename(folder)) || 'app';
}

/** Environment names are labels and parts of object names: a DNS label. */
export const sanitizeName = toDnsLabel;

/**
 * The repository name from the origin remote of the git repository holding `folder`. A `.git`
 * that is partial or unreadable (a container's `.git` synced in without its config, no
 * permission, a worktree pointer to a removed folder) means no name, never an error.
 */
export function repositoryName(folder: string): string | undefined {
  const url = originUrl(folder);
  return url ? repositoryNameOf(url) : undefined;
}

/** The repository name in a remote URL (HTTPS or SSH): its last part without `.git`. */
export function repositoryNameOf(url: string): string | undefined {
  const last = url.replace(/\/+$/, '').split(/[/:]/).pop() ?? '';
  return last.replace(/\.git$/, '') || undefined;
}

/** The URL of the `origin` remote of the git repository holding `folder`, as written there. */
export function originUrl(folder: string): string | undefined {
  const text = gitConfigText(folder);
  const section = text && /\[remote "origin"\]([^[]*)/.exec(text)?.[1];
  return (section && /^\s*url\s*=\s*(.+)$/m.exec(section)?.[1]?.trim()) || undefined;
}

/**
 * The branch checked out in the git repository holding `folder` (from its HEAD: no git process),
 * undefined on a detached HEAD or outside a repository.
 */
export function currentBranch(folder: string): string | undefined {
  const dirs = gitDirsOf(folder);
  const head = dirs && readText(join(dirs.gitDir, 'HEAD'));
  return (head && /^ref:\s*refs\/heads\/(.+)$/m.exec(head)?.[1]?.trim()) || undefined;
}

/** The text of the git config of the repository holding `folder`; the nearest `.git` decides. */
function gitConfigText(folder: string): string | undefined {
  const dirs = gitDirsOf(folder);
  return dirs && readText(join(dirs.commonDir, 'config'));
}

/** The git dir of the repository holding `folder` (HEAD is there) and its common dir (config is there: a worktree shares it). */
function gitDirsOf(folder: string): { gitDir: string; commonDir: string } | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    const kind = entryKind(dotGit);
    if (kind === 'folder') return { gitDir: dotGit, commonDir: dotGit };
    if (kind === 'other') {
      // A worktree or submodule: ".git" is a file pointing at the real git dir.
      const target = /^gitdir:\s*(.+)$/m.exec(readText(dotGit) ?? '')?.[1]?.trim();
      if (!target) return undefined;
      const gitDir = isAbsolute(target) ? target : join(dir, target);
      const common = readText(join(gitDir, 'commondir'))?.trim();
      return { gitDir, commonDir: common ? resolve(gitDir, common) : gitDir };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** A folder, something else (a file, unreadable), or nothing (as for git, a dangling link is nothing). */
function entryKind(path: string): 'folder' | 'other' | undefined {
  try {
    return statSync(path).isDirectory() ? 'folder' : 'other';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 'other';
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
