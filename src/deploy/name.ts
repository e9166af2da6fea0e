/**
 * The environment name: `--name`, else the repository name (the last part of the `origin`
 * remote's URL, read from .git/config: no git process needed), else the folder name. It becomes a
 * Kubernetes label value and part of object names, so it is made a DNS-1123 label.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../cli/errors.ts';
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

/** The repository name from the origin remote of the git repository holding `folder`. */
export function repositoryName(folder: string): string | undefined {
  const config = gitConfigPath(folder);
  if (!config) return undefined;
  const text = readFileSync(config, 'utf8');
  const section = /\[remote "origin"\]([^[]*)/.exec(text)?.[1];
  const url = section && /^\s*url\s*=\s*(.+)$/m.exec(section)?.[1]?.trim();
  if (!url) return undefined;
  const last = url.replace(/\/+$/, '').split(/[/:]/).pop() ?? '';
  return last.replace(/\.git$/, '') || undefined;
}

function gitConfigPath(folder: string): string | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    if (existsSync(dotGit)) {
      if (statSync(dotGit).isDirectory()) return join(dotGit, 'config');
      // A worktree or submodule: ".git" is a file pointing at the real git dir.
      const target = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
      if (!target) return undefined;
      const gitDir = target.startsWith('/') ? target : join(dir, target);
      const common = join(gitDir, 'commondir');
      const configDir = existsSync(common) ? join(gitDir, readFileSync(common, 'utf8').trim()) : gitDir;
      return existsSync(join(configDir, 'config')) ? join(configDir, 'config') : undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}
