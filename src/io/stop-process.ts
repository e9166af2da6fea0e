/**
 * Stopping a process of ours that a PID file names (a running `devtool up`, a local Syncthing left
 * by a killed `up`), and saying only what is true: SIGTERM, a grace period, SIGKILL, and "stopped"
 * only once it is gone. A PID file may be stale, and its PID reused by any other program: a
 * process is only signalled while its command line says it is the one meant, and where this system
 * cannot tell, it is not signalled at all.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { hostPlatform, processTableSource } from '../base/platform.ts';
import { sleep } from '../base/wait.ts';

/** What stopping needs of the operating system; narrow, so tests give an in-memory one. */
export interface ProcessTable {
  /**
   * The arguments of process `pid` while it runs (one that has exited but was not reaped yet counts
   * as gone): undefined when there is none, null when this system cannot tell.
   */
  commandLine(pid: number): readonly string[] | undefined | null;
  /** As process.kill: throws (ESRCH, EPERM) when it cannot. */
  signal(pid: number, signal: 'SIGTERM' | 'SIGKILL'): void;
  sleep(ms: number): Promise<void>;
}

export type StopResult =
  /** None runs there, or the PID now belongs to another program (nothing was signalled). */
  | { outcome: 'not-running' }
  /** It was running and is gone now; `killed` when it needed SIGKILL. */
  | { outcome: 'stopped'; killed: boolean }
  /** It may still run: `reason` says why it was not, or could not be, stopped. */
  | { outcome: 'still-running'; reason: string };

export interface StopOptions {
  /** Recognizes the process meant by its arguments. */
  isOurs(args: readonly string[]): boolean;
  /** How long it gets to end by itself after SIGTERM. */
  graceMs: number;
  processes?: ProcessTable;
}

const POLL_MS = 100;
/** After SIGKILL: only the kernel's own delay. */
const KILL_WAIT_MS = 2_000;

export async function stopProcess(pid: number, o: StopOptions): Promise<StopResult> {
  const processes = o.processes ?? systemProcesses;
  const args = processes.commandLine(pid);
  if (args === null) return { outcome: 'still-running', reason: `this system cannot tell whether pid ${pid} is still it, so it was not signalled` };
  if (args === undefined || !o.isOurs(args)) return { outcome: 'not-running' };
  const gone = () => {
    const now = processes.commandLine(pid);
    return now === undefined || (now !== null && !o.isOurs(now));
  };
  const waitGone = async (ms: number) => {
    for (let waited = 0; waited < ms; waited += POLL_MS) {
      if (gone()) return true;
      await processes.sleep(POLL_MS);
    }
    return gone();
  };
  for (const [signal, waitMs] of [
    ['SIGTERM', o.graceMs],
    ['SIGKILL', KILL_WAIT_MS],
  ] as const) {
    try {
      processes.signal(pid, signal);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ESRCH') return signal === 'SIGTERM' ? { outcome: 'not-running' } : { outcome: 'stopped', killed: false };
      return { outcome: 'still-running', reason: `${signal} failed (${code ?? (err as Error).message})` };
    }
    if (await waitGone(waitMs)) return { outcome: 'stopped', killed: signal === 'SIGKILL' };
  }
  return { outcome: 'still-running', reason: `it was still there ${KILL_WAIT_MS / 1000}s after SIGKILL` };
}

/** What `ps -o stat= -o args= -p PID` printed, with its exit status; `error` when it could not run. */
export interface PsOutput {
  status: number | null;
  stdout: string;
  error?: Error;
}

function runPs(pid: number): PsOutput {
  return spawnSync('ps', ['-o', 'stat=', '-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
}

/** Command lines read from /proc (Linux); `procRoot` is another folder laid out like it in tests. */
export function procCommandLine(procRoot = '/proc'): ProcessTable['commandLine'] {
  return (pid) => {
    try {
      const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
      // "PID (COMMAND) STATE ...": the command may hold spaces and parentheses.
      const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
      if (state === 'Z' || state === 'X') return undefined;
      return readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8')
        .split('\0')
        .filter((a) => a !== '');
    } catch {
      return undefined;
    }
  };
}

/**
 * Command lines from `ps`, on a system without /proc (macOS, the BSDs). Null (cannot tell) when ps
 * cannot run or fails otherwise than "no such process"; `ps` is replaced in tests.
 */
export function psCommandLine(ps: (pid: number) => PsOutput = runPs): ProcessTable['commandLine'] {
  return (pid) => {
    const out = ps(pid);
    if (out.error) return null;
    const [state, ...args] = out.stdout.trim().split(/\s+/);
    // ps exits 1 and prints nothing for a PID that does not exist.
    if (out.status !== 0 || !state) return out.status === 1 ? undefined : null;
    return state.startsWith('Z') ? undefined : args;
  };
}

/**
 * What PowerShell printed for `windowsQuery(pid)`: `+` and the command line while the process runs
 * (`+` alone when Windows does not show this user its command line), nothing when there is none.
 */
function runPowerShell(pid: number): PsOutput {
  return spawnSync('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', windowsQuery(pid)], { encoding: 'utf8', windowsHide: true });
}

export function windowsQuery(pid: number): string {
  return `$p = Get-CimInstance Win32_Process -Filter 'ProcessId=${Math.trunc(pid)}'; if ($p) { '+' + $p.CommandLine }`;
}

/**
 * Command lines on Windows, from Win32_Process through PowerShell (wmic is gone from current
 * Windows). Null (cannot tell) when PowerShell cannot run or fails; replaced in tests.
 */
export function windowsCommandLine(run: (pid: number) => PsOutput = runPowerShell): ProcessTable['commandLine'] {
  return (pid) => {
    const out = run(pid);
    if (out.error || out.status !== 0) return null;
    const line = out.stdout.replace(/\r?\n$/, '');
    return line.startsWith('+') ? windowsArgv(line.slice(1)) : undefined;
  };
}

/**
 * A Windows command line split into arguments as programs built with Microsoft's C runtime split
 * it (CommandLineToArgvW): whitespace separates outside double quotes; 2n backslashes before a
 * quote are n backslashes and the quote opens or closes; 2n+1 are n and a literal quote; `""`
 * inside quotes is a literal quote; other backslashes are themselves.
 */
export function windowsArgv(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let started = false;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\') {
      let n = 0;
      while (line[i + n] === '\\') n++;
      if (line[i + n] === '"') {
        current += '\\'.repeat(Math.floor(n / 2));
        if (n % 2 === 1) current += '"';
        else quoted = !quoted;
        i += n;
      } else {
        current += '\\'.repeat(n);
        i += n - 1;
      }
      started = true;
    } else if (c === '"') {
      if (quoted && line[i + 1] === '"') {
        current += '"';
        i++;
      } else quoted = !quoted;
      started = true;
    } else if ((c === ' ' || c === '\t') && !quoted) {
      if (started) args.push(current);
      current = '';
      started = false;
    } else {
      current += c;
      started = true;
    }
  }
  if (started) args.push(current);
  return args;
}

const fromProc = procCommandLine();
const fromPs = psCommandLine();
const fromWindows = windowsCommandLine();
const readers = { proc: fromProc, ps: fromPs, windows: fromWindows };

/**
 * This machine's processes: /proc on Linux, `ps` on macOS, PowerShell on Windows. On Windows
 * process.kill ends a process at once whatever the signal (no SIGTERM to handle), so the grace
 * period there is only the wait for it to be gone.
 */
export const systemProcesses: ProcessTable = {
  commandLine: (pid) => readers[processTableSource(hostPlatform, existsSync('/proc/self/stat'))](pid),
  signal: (pid, signal) => process.kill(pid, signal),
  sleep,
};
