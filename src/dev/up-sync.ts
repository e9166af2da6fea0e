/**
 * File sync as `up` uses it: before activation, the folders and the remote end's settings (they go
 * into the agent Secret); after the tunnel is up, the sync itself.
 */
import { existsSync, statSync } from 'node:fs';
import { AGENT, type HostCommand, locateHostBinary, SYNCTHING } from '../binaries/host-binary.ts';
import { DevtoolError } from '../base/errors.ts';
import { showPath } from '../manifest/project-scope.ts';
import type { Logger } from '../log/logger.ts';
import { isCaseSensitive } from '../sync/case-sensitivity.ts';
import { remoteSyncthing, syncFolderPairs, type SyncFolderPair } from '../sync/syncthing-config.ts';
import type { SyncKeys } from '../sync/keys.ts';
import { FileSync, type FileSyncOptions, type FirstSync, type SyncTunnel } from '../sync/file-sync.ts';
import { countWatchedFolders, LIMIT_FILE, parseLimit, readLocalLimit, watchLimitWarnings } from '../sync/watch-limits.ts';
import { AGENT_PATH } from './mirror.ts';
import type { DevTarget } from './target.ts';

export interface SyncPlan {
  folders: SyncFolderPair[];
  keys: SyncKeys;
  remoteSection: Record<string, unknown>;
  agentBinary: HostCommand;
  syncthingBinary: HostCommand;
}

/** Undefined when the dev container syncs no folder. */
export async function prepareSync(f: { readonly env: Readonly<NodeJS.ProcessEnv> }, t: DevTarget): Promise<SyncPlan | undefined> {
  const pairs = syncFolderPairs(t.devName, t.manifest.folder, t.dev.sync, t.dev.trustContainer);
  if (pairs.length === 0) return undefined;
  for (const x of pairs) {
    if (!existsSync(x.local) || !statSync(x.local).isDirectory()) {
      throw new DevtoolError(`${t.manifest.file}: services.${t.devName}.sync: local folder ${x.local} does not exist`);
    }
  }
  const folders = pairs.map((x) => ({ ...x, localCaseSensitive: isCaseSensitive(x.local) }));
  const [agentBinary, syncthingBinary] = await Promise.all([locateHostBinary(AGENT, f.env), locateHostBinary(SYNCTHING, f.env)]);
  const keys = await t.state.syncKeys(agentBinary);
  return { folders, keys, remoteSection: remoteSyncthing(keys, folders), agentBinary, syncthingBinary };
}

/**
 * The file sync of this plan, its local end already starting (FileSync.startLocal): made
 * before the dev pod is up, so the local Syncthing comes up while the pod does.
 */
export function createFileSync(
  f: { readonly log: Logger },
  t: DevTarget,
  plan: SyncPlan,
  tunnel: SyncTunnel,
  o: { reset: boolean; notice(m: string): void } & Pick<FileSyncOptions, 'activity' | 'conflict'>,
): FileSync {
  const sync = new FileSync({
    tunnel,
    keys: plan.keys,
    folders: plan.folders,
    stateDir: t.state.dir,
    syncthingBinary: plan.syncthingBinary,
    agentBinary: plan.agentBinary,
    log: f.log,
    notice: o.notice,
    reset: o.reset,
    remoteAgent: AGENT_PATH,
    activity: o.activity,
    conflict: o.conflict,
    label: (x) => showPath(x.local, t.manifest.folder),
  });
  sync.startLocal();
  return sync;
}

/** The first sync, once the tunnel is up; a failure closes the file sync. */
export async function startSync(t: DevTarget, sync: FileSync): Promise<FirstSync[]> {
  try {
    return await sync.start();
  } catch (err) {
    await sync.close();
    throw new DevtoolError(`file sync did not start: ${(err as Error).message} (local log: ${t.state.dir}/syncthing.log)`);
  }
}

/** What a folder does, for people: `./src <-> /app/src (both ways)`, `./config -> /etc/app (sent only)`. */
export function describeFolder(x: SyncFolderPair, base: string): string {
  const local = showPath(x.local, base);
  return x.mode === 'send-only' ? `${local} -> ${x.remote} (sent only)` : `${local} <-> ${x.remote} (both ways)`;
}

/** How the folders sync once the first pass is over. */
export function syncingHow(folders: readonly SyncFolderPair[]): string {
  return folders.every((x) => x.mode === 'two-way') ? 'syncing both ways' : 'syncing as listed above';
}

/** The progress line of the first sync: what the bootstrap copied, or that Syncthing is done. */
export function firstSyncSummary(firstSync: readonly FirstSync[], seconds: string): string {
  const copied = firstSync.flatMap((r) => (r.copied ? [r.copied] : []));
  if (copied.length === 0) return `first sync done in ${seconds}s; ${syncingHow(firstSync.map((r) => r.folder))}`;
  const files = copied.reduce((n, s) => n + s.files, 0);
  const mb = copied.reduce((n, s) => n + s.bytes, 0) / 1e6;
  return (
    `copied ${files} files (${mb.toFixed(1)} MB) into the new volume in ${seconds}s; Syncthing is indexing them (two-way once settled, ` +
    `'devtool status' shows it)`
  );
}

/**
 * Warns when this machine's or the dev container's inotify limit is too low for the synchronized
 * tree (watch-limits.ts). `readRemote` runs a command in the dev container (undefined on failure).
 */
export async function checkWatchLimits(
  plan: SyncPlan,
  readRemote: (command: string) => Promise<string | undefined>,
  notice: (m: string) => void,
): Promise<void> {
  const folders = plan.folders.reduce((n, x) => n + countWatchedFolders(x.local), 0);
  const remote = parseLimit(await readRemote(`cat ${LIMIT_FILE}`));
  for (const w of watchLimitWarnings(folders, { local: readLocalLimit(), remote })) notice(w);
}
