/**
 * `status`: how far file sync is, read from both Syncthing ends while `up` runs (the remote one
 * through the port `up` forwards). The figure is the mean over folders and both directions of
 * Syncthing's own completion (how much of the folder's global state each end has), truncated, so
 * 100.00% means done on both ends, never "almost".
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DevtoolError } from '../base/errors.ts';
import { parseSyncKeys, type SyncKeys } from './keys.ts';
import { LocalSyncthingApi, recordedAddress } from './local-address.ts';
import { SyncthingApi } from './rest.ts';
import { RUNTIME_FILE, type SyncRuntime } from './file-sync.ts';

/** What status reads of a dev container's local state (dev/local-state.ts's DevState). */
export interface SyncStateFiles {
  readonly dir: string;
  readonly syncKeysFile: string;
  /** The PID of the live `up` holding the dev container, if any. */
  holder(): number | undefined;
}

export interface SyncStatus {
  /** 0-100 */
  percent: number;
  runtime: SyncRuntime;
  keys: SyncKeys;
  /** The local Syncthing's REST API as it listens now (its port changes when `up` restarts it). */
  localUrl: string;
}

export function readRuntime(state: SyncStateFiles, devName: string): { runtime: SyncRuntime; keys: SyncKeys } {
  const notRunning = new DevtoolError(`file sync is not running for ${devName} from this folder: start it with 'devtool up ${devName}'`);
  let runtime: SyncRuntime;
  let keys: SyncKeys;
  try {
    runtime = JSON.parse(readFileSync(join(state.dir, RUNTIME_FILE), 'utf8')) as SyncRuntime;
    keys = parseSyncKeys(readFileSync(state.syncKeysFile, 'utf8'));
  } catch {
    throw notRunning;
  }
  if (state.holder() !== runtime.pid) throw notRunning;
  return { runtime, keys };
}

export async function syncStatus(state: SyncStateFiles, devName: string): Promise<SyncStatus> {
  const { runtime, keys } = readRuntime(state, devName);
  const local = new LocalSyncthingApi(() => recordedAddress(state.dir), keys.local.apiKey);
  const remote = new SyncthingApi(runtime.remoteUrl, keys.remote.apiKey);
  const values: number[] = [];
  for (const f of runtime.folders) {
    const [l, r] = await Promise.all([
      local.completion(f.id, runtime.remoteDevice).catch((err: Error) => {
        throw new DevtoolError(`the local sync service does not answer (${err.message}); 'devtool up' may be restarting it`);
      }),
      remote.completion(f.id, runtime.localDevice).catch((err: Error) => {
        throw new DevtoolError(`the dev container's sync service does not answer (${err.message}); 'devtool up' is probably reconnecting`);
      }),
    ]);
    values.push(l.completion, r.completion);
  }
  let mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : 100;
  // Each end's figure comes from the last index it had of the other: while they are not connected
  // (right after a sleep, until `up` has redialled) both can read 100% with changes unsent.
  if (mean >= 100 && runtime.folders.length > 0 && !(await local.connected(runtime.remoteDevice).catch(() => false))) mean = 99.99;
  // After a bootstrap both ends can look complete before the container has indexed what landed.
  if (runtime.firstSyncDone === false) mean = Math.min(mean, 99.99);
  return { percent: mean, runtime, keys, localUrl: local.baseUrl };
}

/** Two decimals, truncated: 99.999 is "99.99%", not "100.00%". */
export function formatPercent(p: number): string {
  return `${(Math.floor(Math.min(100, Math.max(0, p)) * 100) / 100).toFixed(2)}%`;
}
