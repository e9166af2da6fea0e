/**
 * Whether a local folder's file system tells names apart by case. Syncthing assumes it may not,
 * and then checks each name's real case by listing its directory again after every change there
 * (agent/README.md, `caseSensitiveFS`): minutes for thousands of files arriving in one directory.
 * Known to be case-sensitive, the folder goes without those checks. Nothing is written to find
 * out: the folder's own name is looked up with its case changed.
 */
import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The name with the case of each letter changed, or undefined if no letter has two cases. */
export function swapCase(name: string): string | undefined {
  const swapped = [...name].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  return swapped === name ? undefined : swapped;
}

/** True only when known: the folder under its case-swapped name is absent, or another entry. */
export function isCaseSensitive(dir: string): boolean {
  const swapped = swapCase(basename(dir));
  if (!swapped) return false;
  try {
    const [own, other] = [statSync(dir), statSync(join(dirname(dir), swapped))];
    return own.ino !== other.ino || own.dev !== other.dev;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
