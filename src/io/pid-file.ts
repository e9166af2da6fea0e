/**
 * The one owner of PID files (a running `up`'s, the local Syncthing's it started): writing one,
 * reading it, and stopping the process it names without harming another one.
 *
 * The rule: a PID file may be stale (its process was killed, or the machine rebooted) and its PID
 * reused by any other program. So a process is only signalled while its command line, read from
 * the process table (/proc on Linux, `ps` on macOS, PowerShell on Windows: stop-process.ts), says
 * it is the one meant; where the table cannot tell, it is not signalled at all, and the file is
 * kept for the next attempt. The file is removed once what it named is gone, or is not ours (stale).
 */
import { readFileSync, rmSync } from 'node:fs';
import { writeFileAtomic } from './atomic-file.ts';
import { stopProcess, systemProcesses, type ProcessTable, type StopResult } from './stop-process.ts';

export interface PidFileOptions {
  /** Recognizes the process meant by its arguments. */
  isOurs(args: readonly string[]): boolean;
  processes?: ProcessTable;
}

export class PidFile {
  constructor(
    readonly path: string,
    private readonly o: PidFileOptions,
  ) {}

  private get processes(): ProcessTable {
    return this.o.processes ?? systemProcesses;
  }

  write(pid: number): void {
    writeFileAtomic(this.path, `${pid}\n`, 0o644);
  }

  /** The PID the file names, whether or not it still runs; undefined without a (valid) file. */
  read(): number | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return undefined;
    }
    const pid = Number(text.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  /**
   * The PID the file names while a process runs under it (one that exited but was not reaped counts
   * as gone), whatever it runs: for a lock, a reused PID only costs a message naming it, while
   * taking over a live `up`'s file would let two run. Where the table cannot tell, it counts as live.
   */
  live(): number | undefined {
    const pid = this.read();
    return pid !== undefined && this.processes.commandLine(pid) !== undefined ? pid : undefined;
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }

  /** Removes the file if it still names `pid` (another process may have taken it over since). */
  release(pid: number): void {
    if (this.read() === pid) this.remove();
  }

  /**
   * Stops the process the file names (stopProcess: SIGTERM, `graceMs`, SIGKILL, only while it is
   * ours), then removes the file unless it may still run. Undefined when the file names no process
   * or names `except` (a process never stops itself).
   */
  async stop(o: { graceMs: number; except?: number }): Promise<({ pid: number } & StopResult) | undefined> {
    const pid = this.read();
    if (pid === undefined) {
      this.remove();
      return undefined;
    }
    if (pid === o.except) return undefined;
    const result = await stopProcess(pid, { isOurs: this.o.isOurs, graceMs: o.graceMs, processes: this.o.processes });
    if (result.outcome !== 'still-running') this.release(pid);
    return { pid, ...result };
  }
}
