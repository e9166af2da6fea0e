/**
 * What a dev container keeps on this machine, in f.home.devDir(key): the SSH keys of the
 * environment (the client's private key never leaves the machine; the host key's public half is
 * what `exec` pins) and the PID file that stops a second `up` of the same dev container.
 */
import { mkdirSync, readFileSync, rmSync, watch } from 'node:fs';
import { join } from 'node:path';
import { DevtoolError } from '../base/errors.ts';
import type { HostCommand } from '../binaries/host-binary.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import { PidFile } from '../io/pid-file.ts';
import { systemProcesses, type ProcessTable, type StopResult } from '../io/stop-process.ts';
import { waitUntil, type WaitClock } from '../base/wait.ts';
import { generateDevKeys, type DevKeys } from './keys.ts';
import { generateSyncKeys, parseSyncKeys, type SyncKeys } from '../sync/keys.ts';

/** How long `down` lets a running `up` end by itself before killing it. */
export const STOP_GRACE_MS = 5_000;
const LEAVE_POLL_MS = 100;

/** `node .../devtool.cjs up ...`, `devtool up ...`: a devtool `up`, whatever the install. */
export function isDevtoolUp(args: readonly string[]): boolean {
  return args.some((a) => a.includes('devtool')) && args.includes('up');
}

export class DevState {
  constructor(readonly dir: string) {}

  get keysFile(): string {
    return join(this.dir, 'keys.json');
  }
  get syncKeysFile(): string {
    return join(this.dir, 'sync-keys.json');
  }
  get pidFile(): string {
    return join(this.dir, 'up.pid');
  }
  /** Written by `down NAME`: the `up` that runs this dev container among others lets go of this one alone. */
  get leaveFile(): string {
    return join(this.dir, 'leave-request');
  }

  readKeys(): DevKeys | undefined {
    try {
      return JSON.parse(readFileSync(this.keysFile, 'utf8')) as DevKeys;
    } catch {
      return undefined;
    }
  }

  /** The environment's keys, made on first use. Reused so a second `up` does not roll the pod. */
  keys(): DevKeys {
    const found = this.readKeys();
    if (found) return found;
    const keys = generateDevKeys();
    writeFileAtomic(this.keysFile, JSON.stringify(keys, null, 2), 0o600);
    return keys;
  }

  /** The file sync's identities, API keys and passwords, made on first use (kept, like the SSH keys, until `down`). */
  async syncKeys(agentBinary: HostCommand): Promise<SyncKeys> {
    try {
      return parseSyncKeys(readFileSync(this.syncKeysFile, 'utf8'));
    } catch {
      const keys = await generateSyncKeys(agentBinary);
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileAtomic(this.syncKeysFile, JSON.stringify(keys, null, 2), 0o600);
      return keys;
    }
  }

  /**
   * Claims the PID file for this process, or says which `up` already holds it. A file whose process
   * is gone (killed `up`, reboot) is stale and taken over.
   */
  lock(devName: string, pid = process.pid): () => void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const holder = this.holder();
    if (holder !== undefined && holder !== pid) {
      throw new DevtoolError(`'devtool up' is already running for ${devName} from this folder (pid ${holder}); use that session, or stop it first`);
    }
    const file = this.upPidFile();
    file.write(pid);
    return () => file.release(pid);
  }

  /** The PID the PID file names, whether or not it still runs. */
  recordedPid(): number | undefined {
    return this.upPidFile().read();
  }

  /** The PID of a live `up` holding the PID file, if any. */
  holder(): number | undefined {
    return this.upPidFile().live();
  }

  /**
   * `down`: ends the `up` session the PID file names (SIGTERM: `up` closes its tunnel and lets go;
   * SIGKILL if it has not ended within `graceMs`, which loses nothing: its local Syncthing ends
   * with it, and `down` removes what it leaves) and says whether it is really gone. Undefined when
   * no PID file names another process. A PID that now belongs to something other than a devtool
   * `up` (reused after a crash or a reboot) is not signalled.
   */
  async stopHolder(o: { graceMs?: number; processes?: ProcessTable } = {}): Promise<({ pid: number } & StopResult) | undefined> {
    return this.upPidFile(o.processes).stop({ graceMs: o.graceMs ?? STOP_GRACE_MS, except: process.pid });
  }

  /**
   * `down NAME` of a dev container whose `up` runs others too: asks that `up` to end this one's
   * session alone (leave-request, naming it), and waits until it has let go of the PID file. False
   * when it did not within `graceMs` (an `up` of an earlier version never looks): the request is
   * withdrawn, and the caller stops that `up` whole, as before.
   */
  async askHolderToLeave(o: { graceMs?: number; processes?: ProcessTable; clock?: WaitClock } = {}): Promise<boolean> {
    const pid = this.holder();
    if (pid === undefined) return true;
    writeFileAtomic(this.leaveFile, `${pid}\n`, 0o600);
    const processes = o.processes ?? systemProcesses;
    const letGo = () => this.recordedPid() !== pid || processes.commandLine(pid) === undefined;
    try {
      await waitUntil(letGo, { timeoutMs: o.graceMs ?? STOP_GRACE_MS, intervalMs: LEAVE_POLL_MS, timedOut: () => new Error('no answer'), clock: o.clock });
      return true;
    } catch {
      rmSync(this.leaveFile, { force: true });
      return false;
    }
  }

  /**
   * The `up` side of askHolderToLeave: calls `leave` once, when a leave request naming `pid` is (or
   * already was) in the state folder. Returns what stops looking.
   */
  onLeaveRequest(leave: () => void, pid = process.pid): () => void {
    let asked = false;
    const look = () => {
      if (asked) return;
      let named: number;
      try {
        named = Number(readFileSync(this.leaveFile, 'utf8').trim());
      } catch {
        return;
      }
      if (named !== pid) return;
      asked = true;
      rmSync(this.leaveFile, { force: true });
      stop();
      leave();
    };
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const watcher = watch(this.dir, look);
    // Nothing to look at for: a watch that fails later (the folder removed by `down`) just ends.
    watcher.on('error', () => watcher.close());
    const stop = () => watcher.close();
    look();
    return stop;
  }

  private upPidFile(processes?: ProcessTable): PidFile {
    return new PidFile(this.pidFile, { isOurs: isDevtoolUp, processes });
  }

  /** `down`: forget the keys (the next `up` makes new ones) and any stale PID file. */
  clear(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
