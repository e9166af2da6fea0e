/**
 * Files this machine deleted while no `up` ran, which the container changed meanwhile. Syncthing
 * lets an edit beat a concurrent deletion, so the file would come back here under its name. The
 * first pass keeps the deletion instead, and the container's edit as a conflict copy: the
 * container's file is renamed there (SFTP) to Syncthing's conflict-copy name, the container
 * rescans both names (its old name is then a deletion too), and the copy reaches this machine
 * once the folder turns two-way. Which paths: first-pass.ts (planFirstPass), from this machine's
 * own index; nothing here ever deletes a local file.
 */
import { posix } from 'node:path';
import type ssh2 from 'ssh2';
import type { Logger } from '../log/logger.ts';
import type { DeletedHere, LocalIndex } from './first-pass.ts';
import type { SyncthingApi } from './rest.ts';

/** How many `/rest/db/file` requests run at once when the local index is read path by path. */
const INDEX_READS_AT_ONCE = 8;

/** This machine's index entries of `names` (`/rest/db/file`'s `local`; a path it never had reads as not deleted). */
export async function readLocalIndex(api: Pick<SyncthingApi, 'file'>, folder: string, names: readonly string[]): Promise<LocalIndex> {
  const index = new Map<string, { deleted?: boolean; version?: string[] }>();
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++]!;
      // Gone from both indexes since the need list was read (Syncthing answers 404): nothing to tell.
      const entry = await api.file(folder, name).catch((err: Error) => (/HTTP 404/.test(err.message) ? {} : Promise.reject(err)));
      const local = 'local' in entry ? entry.local : undefined;
      if (local) index.set(name, { deleted: local.deleted, version: local.version });
    }
  };
  await Promise.all(Array.from({ length: Math.min(INDEX_READS_AT_ONCE, names.length) }, worker));
  return index;
}

export interface KeepAsCopiesOptions {
  connection: ssh2.Client;
  /** The folder's path in the dev container. */
  remoteDir: string;
  /** Rescans the given paths on the container's end; resolves once indexed. */
  rescan(paths: string[]): Promise<void>;
  log: Logger;
}

/**
 * Renames each container file to its conflict-copy name and has the container rescan both names.
 * Returns the ones renamed; one that could not be (gone meanwhile, say) is logged and left as it
 * is: it then comes back here under its name, as an edit that beats a deletion.
 */
export async function keepContainerVersionsAsCopies(items: readonly DeletedHere[], o: KeepAsCopiesOptions): Promise<DeletedHere[]> {
  const sftp = await openSftp(o.connection);
  const renamed: DeletedHere[] = [];
  try {
    for (const d of items) {
      try {
        await rename(sftp, posix.join(o.remoteDir, d.path), posix.join(o.remoteDir, d.conflictCopy));
        renamed.push(d);
      } catch (err) {
        o.log.info(`cannot rename ${d.path} in the dev container to ${d.conflictCopy} (${(err as Error).message}): the container's version comes back here`);
      }
    }
  } finally {
    sftp.end();
  }
  if (renamed.length > 0) await o.rescan(renamed.flatMap((d) => [d.path, d.conflictCopy]));
  return renamed;
}

function openSftp(c: ssh2.Client): Promise<ssh2.SFTPWrapper> {
  return new Promise((resolve, reject) => c.sftp((err, sftp) => (err ? reject(err) : resolve(sftp))));
}

function rename(sftp: ssh2.SFTPWrapper, from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => sftp.rename(from, to, (err) => (err ? reject(err) : resolve())));
}
