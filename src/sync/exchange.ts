/**
 * When do the two Syncthings know each other's files? A completion figure can be stale: it is
 * computed from whatever index the asking end has received so far, so it reads 100% before the
 * container's latest changes have arrived (how the first pass once overwrote 1,500 local files).
 * Sequence numbers are exact: each end numbers its own changes to a folder, and reports the
 * highest number it has received from each peer. An end has the other's index as of a moment once
 * the number it has received reaches the number the other reported at that moment.
 */
import type { FolderStatus } from './rest.ts';

/** What the exchange needs of each end's REST API (SyncthingApi has it; tests fake it). */
export interface SyncEnd {
  status(folder: string): Promise<FolderStatus>;
  /** Resolves once indexed; `timeoutMs` bounds the wait (a first scan hashes every file). */
  scan(folder: string, subs?: readonly string[], timeoutMs?: number): Promise<void>;
  connected(device: string): Promise<boolean>;
}

export interface SyncEnds {
  local: SyncEnd;
  remote: SyncEnd;
  localDevice: string;
  remoteDevice: string;
  /** True once the session is closing: waiting on would only keep `up` alive. */
  closed(): boolean;
  sleep(ms: number): Promise<void>;
  now(): number;
}

const POLL_MS = 100;

/** The highest sequence of `device`'s changes that `status`'s end has received. */
export function receivedFrom(status: FolderStatus, device: string): number {
  const want = device.toUpperCase();
  for (const [id, seq] of Object.entries(status.remoteSequence ?? {})) if (id.toUpperCase() === want) return seq;
  return 0;
}

/**
 * Resolves once each end has received every change the other had indexed when this was called,
 * and they are connected. Changes made later (an app writing on) do not move the goal, so this
 * ends even while files keep changing.
 */
export async function indexesExchanged(e: SyncEnds, folder: string, deadline: number): Promise<void> {
  let goal: { local: number; remote: number } | undefined;
  let last = 'not read yet';
  for (;;) {
    if (e.closed()) throw new Error(`the sync session of folder ${folder} was closed`);
    try {
      const [l, r] = await Promise.all([e.local.status(folder), e.remote.status(folder)]);
      goal ??= { local: l.sequence, remote: r.sequence };
      const localHas = receivedFrom(l, e.remoteDevice);
      const remoteHas = receivedFrom(r, e.localDevice);
      last =
        `this machine has the container's changes up to ${localHas} of ${goal.remote}, the container has this machine's up to ${remoteHas} of ` +
        `${goal.local}`;
      if (localHas >= goal.remote && remoteHas >= goal.local && (await e.local.connected(e.remoteDevice))) return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (e.now() > deadline) throw new Error(`the two ends did not exchange their file lists in time (${last})`);
    await e.sleep(POLL_MS);
  }
}

/**
 * Both ends scan their folder now (each scan returns once indexed), then exchange indexes: every
 * change on either disk, made while no session ran, is then known to both.
 */
export async function scanAndExchange(e: SyncEnds, folder: string, deadline: number, step?: (what: string) => void): Promise<void> {
  // Whole-folder scans, the first ones hashing every file: as long as the session allows.
  const wait = scanWait(e, deadline);
  await Promise.all([e.local.scan(folder, [], wait), e.remote.scan(folder, [], wait)]);
  step?.('both ends scanned');
  await indexesExchanged(e, folder, deadline);
  step?.('indexes exchanged');
}

/** How long a whole-folder scan may take: until the deadline, and at least a minute. */
export function scanWait(e: Pick<SyncEnds, 'now'>, deadline: number): number {
  return Math.max(60_000, deadline - e.now());
}

/**
 * A list read whole from one state of this end's index, such as its need list. Syncthing hands
 * the need list out in pages, each from a snapshot of its own: an index update between two pages
 * (the container pulling this machine's edits, or resolving a conflict, or its app writing) moves
 * every later entry up or down, and a page boundary then skips some (how the first pass once let
 * the container delete a file here). Every such update moves this end's own sequence or the one
 * it has received from the container, so a list read while neither moved is one state's;
 * otherwise it is read again.
 */
export async function readSettled<T>(e: SyncEnds, folder: string, read: () => Promise<T[]>, deadline: number): Promise<T[]> {
  const mark = async () => {
    const s = await e.local.status(folder);
    return `${s.sequence}/${receivedFrom(s, e.remoteDevice)}`;
  };
  for (let reads = 1; ; reads++) {
    if (e.closed()) throw new Error(`the sync session of folder ${folder} was closed`);
    const before = await mark();
    const items = await read();
    const after = await mark();
    if (before === after) return items;
    if (e.now() > deadline)
      throw new Error(`the file lists of folder ${folder} kept changing while read (${reads} reads): the container's files change without a pause`);
    await e.sleep(POLL_MS);
  }
}
