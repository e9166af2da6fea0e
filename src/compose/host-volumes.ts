/**
 * How `deploy` treats each host volume (`HOSTPATH:PATH`), decided from the files as they are now:
 *   - a file, or a folder with content, inside the Compose folder: `bake`, copied into an image
 *     built on the service's image (image/bake.ts);
 *   - a folder that is missing or empty (nothing but `.gitkeep`, `.keep`, `.gitignore`), inside the
 *     Compose folder: `claim`, runtime data (`./data:/var/lib/postgresql/data`), a claim of its own
 *     so the data outlives the pod;
 *   - a path outside the Compose folder (`/etc/localtime`, `/var/run/docker.sock`, `../other`), or
 *     something that is neither a file nor a folder: `skip`, not deployed, said in a warning.
 * The translation (translate/volumes.ts) stays pure: it receives this plan as an option.
 */
import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import type { ComposeProject } from './model.ts';

export type HostVolumeUse = { readonly use: 'bake' } | { readonly use: 'claim' } | { readonly use: 'skip'; readonly reason: string };

/** Compose service name -> container path -> what deploy does with that host volume. */
export type HostVolumePlan = Readonly<Record<string, Readonly<Record<string, HostVolumeUse>>>>;

/** Files that mark a folder kept empty in git: a folder holding only these is empty. */
const PLACEHOLDERS = new Set(['.gitkeep', '.keep', '.gitignore']);

/** What `planHostVolumes` reads; a test passes its own. */
export interface HostFiles {
  /** undefined: missing. */
  kind(path: string): 'file' | 'folder' | 'other' | undefined;
  names(folder: string): string[];
}

export const nodeHostFiles: HostFiles = {
  kind(path) {
    try {
      const st = statSync(path);
      return st.isFile() ? 'file' : st.isDirectory() ? 'folder' : 'other';
    } catch {
      return undefined;
    }
  },
  names: (folder) => readdirSync(folder),
};

/** Whether `path` is the project folder or inside it (lexically: `..` and absolute paths elsewhere are outside). */
export function insideProject(projectDir: string, path: string): boolean {
  const rel = relative(projectDir, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

export function planHostVolumes(project: ComposeProject, files: HostFiles = nodeHostFiles): HostVolumePlan {
  const plan: Record<string, Record<string, HostVolumeUse>> = {};
  for (const s of project.services) {
    const uses: Record<string, HostVolumeUse> = {};
    for (const v of s.volumes) {
      if (v.kind !== 'bind') continue;
      uses[v.target] = hostVolumeUse(project.projectDir, v.source, files);
    }
    if (Object.keys(uses).length > 0) plan[s.name] = uses;
  }
  return plan;
}

function hostVolumeUse(projectDir: string, source: string, files: HostFiles): HostVolumeUse {
  if (!insideProject(projectDir, source)) return { use: 'skip', reason: 'it is outside the Compose folder' };
  const kind = files.kind(source);
  if (kind === undefined) return { use: 'claim' };
  if (kind === 'file') return { use: 'bake' };
  if (kind === 'other') return { use: 'skip', reason: 'it is neither a file nor a folder' };
  let names: string[];
  try {
    names = files.names(source);
  } catch (err) {
    return { use: 'skip', reason: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  return names.every((n) => PLACEHOLDERS.has(n)) ? { use: 'claim' } : { use: 'bake' };
}
