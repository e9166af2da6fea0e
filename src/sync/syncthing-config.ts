/**
 * The `syncthing` sections of the agent configuration (agent/README.md) for both ends of a dev
 * environment's file sync. Pure: the remote one goes into the agent Secret (mirror.ts), the local
 * one is written by `devtool-agent syncthing-config` into the CLI's own Syncthing home.
 *
 * The remote end never dials (it is reachable only through the SSH tunnel); the local end dials
 * the tunnel's local port. The local folders start `sendonly`: nothing the container has reaches
 * them until the first pass (first-pass.ts) has made sure none of it overwrites or deletes a local
 * file; then file-sync.ts turns the two-way ones `sendreceive` (send-only ones, `:ro` in the
 * manifest, stay `sendonly` and are `receiveonly` remotely); and paused, so they do not scan while
 * a new volume is being filled (bootstrap.ts).
 */
import { isAbsolute, resolve } from 'node:path';
import { sha256 } from '../base/hash.ts';
import type { SyncFolder as ManifestSyncFolder, SyncMode } from '../manifest/model.ts';
import type { SyncKeys } from './keys.ts';

export interface SyncFolderPair {
  /** Same ID on both ends: stable for a dev container and remote path. */
  readonly id: string;
  /** Absolute local path. */
  readonly local: string;
  /** Absolute path in the dev container. */
  readonly remote: string;
  /** The manifest's `trustContainer`: the container may send `.git`, execute bits and links out of the folder. */
  readonly trustContainer?: boolean;
  /** `send-only`: the container's end is receive-only, so what changes there stays there. */
  readonly mode: SyncMode;
  /** The local folder's file system is known to tell names apart by case (case-sensitivity.ts). */
  readonly localCaseSensitive?: boolean;
}

export const GUI_USER = 'devtool';

/**
 * Every conflict copy is kept, on both ends. Syncthing's default (10 per file) deletes the oldest
 * copies beyond that, which loses a version; and to count them it lists the whole folder at each
 * conflict: 5,000 conflicts in a folder of 5,000 files kept the container's Syncthing busy for
 * minutes (`first-pass-rounds.ts`' round of 5,000, which timed out in CI).
 */
const UNLIMITED_CONFLICTS = -1;

/**
 * Syncthing's own watcher and periodic rescan, on both ends, are only a safety net: our watchers
 * (watcher.ts here, the agent's rescanner there) ask for a scan of each changed path at once.
 * These are Syncthing's defaults, the settings every figure in docs/sync.md was measured with.
 */
const SAFETY_NET = { fsWatcherDelayS: 10, rescanIntervalS: 3600 };
export const REMOTE_GUI_PORT = 8384;
export const REMOTE_SYNC_PORT = 22000;

export function syncFolderPairs(devName: string, manifestFolder: string, sync: readonly ManifestSyncFolder[], trustContainer = false): SyncFolderPair[] {
  return sync.map((s) => ({
    id: `devtool-${devName}-${sha256(s.remote).slice(0, 8)}`,
    local: isAbsolute(s.local) ? s.local : resolve(manifestFolder, s.local),
    remote: s.remote,
    mode: s.mode,
    ...(trustContainer ? { trustContainer } : {}),
  }));
}

/** The agent configuration's `syncthing` section for the agent in the dev container. */
export function remoteSyncthing(keys: SyncKeys, folders: readonly SyncFolderPair[]): Record<string, unknown> {
  return {
    certificate: keys.remote.certificate,
    key: keys.remote.key,
    deviceID: keys.remote.deviceID,
    deviceName: 'devtool-remote',
    apiKey: keys.remote.apiKey,
    guiUser: GUI_USER,
    guiPassword: keys.remote.password,
    guiAddress: `127.0.0.1:${REMOTE_GUI_PORT}`,
    listenAddress: `tcp://127.0.0.1:${REMOTE_SYNC_PORT}`,
    peer: { deviceID: keys.local.deviceID, name: 'devtool-local', addresses: [] },
    // A send-only folder (`:ro`) is receive-only there from the start: the container's changes
    // are never announced, so nothing of them can reach this machine. ignorePerms: the container's
    // permission bits (a planted `chmod +x`) are not even sent; the guard is this machine's
    // Syncthing, which takes no execute bit from the container whatever it sends. The agent still
    // applies the laptop's bits there (docs/sync.md, "Permission bits"). A trusted container
    // keeps them.
    folders: folders.map((f) => ({
      id: f.id,
      path: f.remote,
      label: f.remote,
      type: f.mode === 'send-only' ? 'receiveonly' : 'sendreceive',
      ignorePerms: !f.trustContainer,
      maxConflicts: UNLIMITED_CONFLICTS,
      ...SAFETY_NET,
      // The dev volume is a Linux file system: no checks for a case-insensitive one
      // (agent/README.md, caseSensitiveFS).
      caseSensitiveFS: true,
    })),
  };
}

/**
 * A whole agent configuration for the CLI's local Syncthing (only its `syncthing` section is used). `peerPort`
 * is the tunnel's local end, forwarded to the remote Syncthing's sync port.
 */
export function localAgentConfig(keys: SyncKeys, folders: readonly SyncFolderPair[], peerPort: number): Record<string, unknown> {
  return {
    version: 1,
    syncthing: {
      certificate: keys.local.certificate,
      key: keys.local.key,
      deviceID: keys.local.deviceID,
      deviceName: 'devtool-local',
      apiKey: keys.local.apiKey,
      guiUser: GUI_USER,
      guiPassword: keys.local.password,
      // Port 0: Syncthing binds whatever port is free as it binds, no port is chosen beforehand that
      // another program could take first; LocalSyncthing reads the REST API's port from its log.
      // It only dials out, but always listens for sync too: any port will do.
      guiAddress: '127.0.0.1:0',
      listenAddress: 'tcp://127.0.0.1:0',
      reconnectIntervalS: 2,
      peer: { deviceID: keys.remote.deviceID, name: 'devtool-remote', addresses: [`tcp://127.0.0.1:${peerPort}`] },
      folders: folders.map((f) => ({
        id: f.id,
        path: f.local,
        label: f.local,
        type: 'sendonly',
        // The user's files: keep fsync.
        disableFsync: false,
        maxConflicts: UNLIMITED_CONFLICTS,
        fsWatcherEnabled: true,
        ...SAFETY_NET,
        caseSensitiveFS: f.localCaseSensitive === true,
        // The folder itself is the marker: no .stfolder in the user's project. The remote end keeps
        // the default marker, its guard against syncing an unmounted (empty) volume as deletions.
        markerName: '.',
        // Unpaused by the session once the container's folders are ready (bootstrap.ts).
        paused: true,
      })),
    },
  };
}
