/**
 * Where a link really leads on this machine: its target resolved the way the kernel resolves a
 * path, following every link met on the way (a chain, or a link in the middle of another's
 * target), so `esc -> lnk/b/lnk/b/../../../etc` with `lnk/b -> ..` leads where the kernel would
 * take it, not where the spelling suggests. Pure: the file system is the `readlink` given.
 */
import { posix } from 'node:path';

/** Linux gives up after 40 links in one path (ELOOP): so does this. */
const MAX_LINKS = 40;

/**
 * The path `abs` (absolute, `/`-separated) leads to: each link met is replaced by its target, `..`
 * climbs from where the links led. A component that does not exist here is taken as a directory
 * of that name, as something created there later would be. undefined: a loop, or more than
 * MAX_LINKS links. `readlink` returns a link's target, or undefined for anything that is not a link.
 */
export function realPath(abs: string, readlink: (path: string) => string | undefined): string | undefined {
  let resolved = '/';
  // The components still to walk, the next one last.
  const pending = abs.split('/').reverse();
  let followed = 0;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      resolved = posix.dirname(resolved);
      continue;
    }
    const next = posix.join(resolved, part);
    const target = readlink(next);
    if (target === undefined) {
      resolved = next;
      continue;
    }
    if (++followed > MAX_LINKS) return undefined;
    if (target.startsWith('/')) resolved = '/';
    pending.push(...target.split('/').reverse());
  }
  return resolved;
}

/** Whether `path` is `root` or below it (both absolute and resolved). */
export function isWithin(root: string, path: string): boolean {
  return path === root || path.startsWith(root === '/' ? '/' : `${root}/`);
}
