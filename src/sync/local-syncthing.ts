/**
 * The CLI's own Syncthing, the local end of file sync. It lives as long as `up`: started after the
 * tunnel is up, restarted with backoff if it dies, stopped when `up` ends. Its home (config,
 * certificate, index database) is in the dev environment's state folder, rewritten from the
 * agent configuration before every start by `devtool-agent syncthing-config`, the agent's own generator, so
 * both ends are configured by the same code.
 *
 * A killed `up` (SIGKILL) cannot stop its child; the PID file lets the next `up` or `down` do it,
 * and only when its command line (/proc, `ps` or PowerShell) says that PID still runs Syncthing on this home.
 *
 * Its REST API binds port 0 (syncthing-config.ts); the port it got is read back from its log after every
 * start and kept in `address` (local-address.ts says why).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { promisify } from 'node:util';
import { DevtoolError } from '../base/errors.ts';
import { endsWithParent } from '../base/platform.ts';
import type { HostCommand } from '../binaries/host-binary.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import { PidFile } from '../io/pid-file.ts';
import type { ProcessTable } from '../io/stop-process.ts';
import type { Logger } from '../log/logger.ts';
import { guiPortFromLog, isLocalSyncthingOf, removeAddressFile, writeAddressFile, type LocalAddress } from './local-address.ts';

export interface LocalSyncthingOptions {
  /** The dev environment's state folder; Syncthing's home is `<stateDir>/syncthing`. */
  stateDir: string;
  syncthingBinary: HostCommand;
  agentBinary: HostCommand;
  agentConfig: Record<string, unknown>;
  /** The folders whose pulls the patched Syncthing guards (syncthingEnv). */
  guardedFolders: readonly string[];
  log: Logger;
  notice(message: string): void;
  /**
   * Called when a Syncthing started again after one died: it starts from its configuration (folders
   * paused, send-only), so the session must put back what it had changed since.
   */
  restarted?(): void;
}

const BACKOFF_MIN_MS = 500;
/** How long `stop` waits for Syncthing to exit on SIGTERM before killing it. */
const STOP_GRACE_MS = 2_000;
const BACKOFF_MAX_MS = 10_000;
/** How often the log is read for the API's port: until it is known, then (an API restart moves it). */
const FOLLOW_STARTING_MS = 50;
const FOLLOW_RUNNING_MS = 500;

export class LocalSyncthing {
  private child?: ChildProcess;
  private stopped = false;
  private current?: LocalAddress;
  private stopFollowing = () => {};
  private spawns = 0;
  readonly home: string;
  readonly logFile: string;
  private readonly pidFile: PidFile;
  private readonly agentConfigFile: string;

  constructor(private readonly o: LocalSyncthingOptions) {
    this.home = join(o.stateDir, 'syncthing');
    this.logFile = join(o.stateDir, 'syncthing.log');
    this.pidFile = syncthingPidFile(o.stateDir);
    this.agentConfigFile = join(o.stateDir, 'syncthing-contract.json');
  }

  /** Where the running Syncthing's REST API listens; undefined while none runs or before it says. */
  get address(): LocalAddress | undefined {
    return this.current;
  }

  async start(): Promise<void> {
    await stopStaleSyncthing(this.o.stateDir);
    mkdirSync(this.home, { recursive: true, mode: 0o700 });
    // Holds the certificate's key, the API key and the password.
    writeFileAtomic(this.agentConfigFile, JSON.stringify(this.o.agentConfig, null, 2), 0o600);
    this.spawnOnce();
  }

  private spawnOnce(delay = BACKOFF_MIN_MS): void {
    const startedAt = Date.now();
    void this.writeHome()
      .then(() => {
        if (this.stopped) return;
        // Without its monitor process (STMONITORED below) Syncthing writes no log file of its own
        // (`--logfile` is the monitor's): its output goes to our log file instead.
        const serve = [
          this.o.syncthingBinary.file,
          ...this.o.syncthingBinary.args,
          'serve',
          `--home=${this.home}`,
          '--no-browser',
          '--no-restart',
          '--no-upgrade',
          '--no-default-folder',
          '--skip-port-probing',
          '--logflags=3',
        ];
        // On Linux through the agent's with-parent (it execs Syncthing, same PID): the kernel ends
        // Syncthing when this process ends, even by SIGKILL, so a killed `up` leaves none behind.
        const agent = this.o.agentBinary;
        const [program, ...args] = endsWithParent() ? [agent.file, ...agent.args, 'with-parent', String(process.pid), '--', ...serve] : serve;
        const logFd = openLog(this.logFile);
        const logStart = fstatSync(logFd).size;
        const child = spawn(program!, args, {
          stdio: ['ignore', logFd, logFd],
          env: syncthingEnv(process.env, this.o.guardedFolders),
          windowsHide: true,
        });
        closeSync(logFd); // the child has its own copy
        this.child = child;
        if (child.pid) this.pidFile.write(child.pid);
        if (child.pid) this.stopFollowing = this.followLog(child.pid, logStart);
        if (++this.spawns > 1) this.o.restarted?.();
        child.once('exit', (code, signal) => {
          this.child = undefined;
          // Its port is free from now on: no request may go there (local-address.ts).
          this.forgetAddress();
          if (this.stopped) return;
          // A run that lasted resets the backoff; quick crashes double it.
          const next = Date.now() - startedAt > 10_000 ? BACKOFF_MIN_MS : Math.min(delay * 2, BACKOFF_MAX_MS);
          this.o.log.debug(`local syncthing exited (${signal ?? code}); restarting in ${next} ms`);
          if (code !== 3) this.o.notice(`the local sync service stopped (${signal ?? `exit code ${code}`}); restarting it (log: ${this.logFile})`);
          setTimeout(() => this.spawnOnce(next), code === 3 ? 0 : next);
        });
      })
      .catch((err: Error) => {
        this.o.notice(`cannot configure the local sync service: ${err.message}`);
        if (!this.stopped) setTimeout(() => this.spawnOnce(Math.min(delay * 2, BACKOFF_MAX_MS)), delay);
      });
  }

  /**
   * Reads what the Syncthing `pid` writes to the log from `offset` on, and records the port of its
   * every "GUI and API listening on" line. Returns the function that stops reading.
   */
  private followLog(pid: number, offset: number): () => void {
    const decoder = new StringDecoder('utf8');
    let partial = '';
    let timer: NodeJS.Timeout | undefined;
    let following = true;
    const read = () => {
      try {
        const fd = openSync(this.logFile, 'r');
        try {
          const size = fstatSync(fd).size;
          if (size > offset) {
            const chunk = Buffer.alloc(size - offset);
            offset += readSync(fd, chunk, 0, chunk.length, offset);
            const lines = (partial + decoder.write(chunk)).split('\n');
            partial = lines.pop() ?? '';
            const port = guiPortFromLog(lines);
            if (port !== undefined && port !== this.current?.port) {
              this.current = { pid, port };
              writeAddressFile(this.o.stateDir, this.current);
              this.o.log.debug(`local syncthing (pid ${pid}) listens on 127.0.0.1:${port}`);
            }
          }
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        this.o.log.debug(`cannot read ${this.logFile}: ${(err as Error).message}`);
      }
      if (!following) return;
      timer = setTimeout(read, this.current ? FOLLOW_RUNNING_MS : FOLLOW_STARTING_MS);
      timer.unref();
    };
    read();
    return () => {
      following = false;
      clearTimeout(timer);
    };
  }

  private forgetAddress(): void {
    this.stopFollowing();
    this.current = undefined;
    removeAddressFile(this.o.stateDir);
  }

  private async writeHome(): Promise<void> {
    try {
      await promisify(execFile)(this.o.agentBinary.file, [
        ...this.o.agentBinary.args,
        'syncthing-config',
        '--home',
        this.home,
        '--config',
        this.agentConfigFile,
      ]);
    } catch (err) {
      const stderr = ((err as { stderr?: string }).stderr ?? '').trim();
      throw new DevtoolError(`devtool-agent syncthing-config failed: ${stderr || (err as Error).message}`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.forgetAddress();
    const child = this.child;
    if (child?.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      // It normally exits in under a second. Stopped while a connection to the container is still
      // being set up, it waits up to 10 s (its protocol.CloseTimeout) to say goodbye on a connection
      // that never started: seen as a 5 s Ctrl-C right after `up` was ready. Killing it then loses
      // nothing (its database survives a kill; a file being pulled is only renamed into place once
      // complete).
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    this.pidFile.remove();
  }
}

/** Past this size the log starts anew at the next start, the old one kept as `.1`. */
const LOG_MAX_BYTES = 5 * 1024 * 1024;

/** Opens the log for appending, rotating it first when it has grown past LOG_MAX_BYTES. */
function openLog(path: string): number {
  try {
    if (statSync(path).size > LOG_MAX_BYTES) renameSync(path, `${path}.1`);
  } catch {
    // no log yet
  }
  return openSync(path, 'a', 0o600);
}

/**
 * Stops a Syncthing left running on this state folder by an `up` that was killed
 * (its PID file is kept while it may still run: the next `up` or `down` tries again).
 */
export async function stopStaleSyncthing(stateDir: string, processes?: ProcessTable): Promise<void> {
  await syncthingPidFile(stateDir, processes).stop({ graceMs: 5_000 });
}

/** Where Syncthing v1 keeps its index database in its home (`lib/locations`: LevelDBDir). */
const INDEX_DATABASE = 'index-v0.14.0.db';

/**
 * What `down` leaves of a dev environment's state folder when the volume stays: the local
 * Syncthing's index database alone, what this machine had at its last sync (no keys, API key or
 * password: the next `up` makes new ones). The container's index stays on the volume; with this
 * machine's, the next `up`'s first scan finds what was deleted or renamed here meanwhile as
 * deletions, instead of files only the container has.
 */
export function clearAllButIndex(stateDir: string): void {
  const home = join(stateDir, 'syncthing');
  for (const name of readdirOrNone(stateDir)) if (name !== 'syncthing') rmSync(join(stateDir, name), { recursive: true, force: true });
  for (const name of readdirOrNone(home)) if (name !== INDEX_DATABASE) rmSync(join(home, name), { recursive: true, force: true });
}

function readdirOrNone(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The local Syncthing's PID file: it names a Syncthing of this state folder, or it is stale. */
function syncthingPidFile(stateDir: string, processes?: ProcessTable): PidFile {
  return new PidFile(join(stateDir, 'syncthing.pid'), { isOurs: isLocalSyncthingOf(stateDir), processes });
}

/**
 * The local Syncthing's environment. DEVTOOL_GUARDED_FOLDERS: the folders whose pulls devtool's
 * Syncthing patch guards (agent/README.md, "The Syncthing patches": no `.git` or `HEAD`, no
 * execute bit from the container), always ours, never the developer's. STMONITORED: one process
 * (no monitor fork) that we watch and signal (agent/README.md). GOGC 50 (Go's default: 100) unless
 * the developer set one: this Syncthing shares the laptop with the editor for hours, mostly idle,
 * and Go keeps up to twice the live heap of its last collection, which after a big tree's first
 * sync is the burst's. For 40,000 files: 33 MB live idle, 68 MB at the peak; resident 92 to 141 MB
 * with 100, 74 to 80 MB with 50 (docs/decisions/0169-local-syncthing-gogc-50.md).
 */
export function syncthingEnv(env: NodeJS.ProcessEnv, guardedFolders: readonly string[]): NodeJS.ProcessEnv {
  return {
    GOGC: '50',
    ...env,
    DEVTOOL_GUARDED_FOLDERS: guardedFolders.join(','),
    STMONITORED: 'yes',
    STNOUPGRADE: '1',
    STNORESTART: '1',
    STNODEFAULTFOLDER: '1',
  };
}
