/**
 * A program in the dev container over SSH, wired to this terminal: exec of a command, or the
 * shell. With a terminal: a PTY (raw mode, window size followed); without: plain pipes, stdin's EOF
 * passed on. The remote exit code comes back (a signal as 128 + its number, like a shell).
 */
import type ssh2 from 'ssh2';
import { DevtoolError } from '../base/errors.ts';
import type { IOStreams } from '../factory.ts';

const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, KILL: 9, TERM: 15, PIPE: 13, ABRT: 6, SEGV: 11 };

export interface SshProgramOptions {
  /** A command line for the user's shell; undefined opens the shell. */
  command?: string;
  pty: boolean;
  term?: string;
  /** Ends the program from this side: the terminal is given back, the channel closed, and the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The connection went before the command ended (a dropped tunnel, a restarted pod): no exit
 * status came. Said so, rather than a bare exit code 1 with nothing on stderr.
 */
export class ConnectionLostError extends DevtoolError {
  constructor() {
    super('the connection to the dev container closed before the command ended; its exit status is unknown');
  }
}

export function runSshProgram(c: ssh2.Client, io: IOStreams, o: SshProgramOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const size = () => ({ rows: (io.stdout as { rows?: number }).rows ?? 24, cols: io.stdout.columns ?? 80 });
    const pty = o.pty ? { term: o.term || 'xterm-256color', ...size(), height: 0, width: 0 } : undefined;
    // A connection that goes while the SSH channel opens fails its request in words of its own ('No
    // response from server', 'Not connected'): it is the same loss as one during the command.
    // ssh2 says 'close' before it fails what was pending.
    let gone = false;
    const onGone = () => (gone = true);
    c.once('close', onGone);
    const fail = (err: unknown) => {
      c.off('close', onGone);
      reject(gone ? new ConnectionLostError() : err);
    };
    const started = (err: Error | undefined, stream: ssh2.ClientChannel) => {
      if (err) return fail(err);
      let code: number | undefined;
      stream.on('exit', (exitCode: number | null, signal?: string) => {
        code = exitCode ?? (signal ? 128 + (SIGNALS[signal] ?? 1) : 1);
      });
      const stdin = io.stdin;
      let restored = false;
      const restore = () => {
        if (restored) return;
        restored = true;
        stdin.unpipe(stream);
        if (pty) stdin.setRawMode?.(false);
        stdin.pause();
        io.stdout.off('resize', onResize);
        o.signal?.removeEventListener('abort', abort);
        c.off('close', onGone);
      };
      const onResize = () => {
        const s = size();
        stream.setWindow(s.rows, s.cols, 0, 0);
      };
      const abort = () => {
        restore();
        reject(o.signal?.reason);
        stream.close();
      };
      if (pty) {
        stdin.setRawMode?.(true);
        io.stdout.on('resize', onResize);
      }
      stdin.pipe(stream);
      stream.pipe(io.stdout, { end: false });
      stream.stderr.pipe(io.stderr, { end: false });
      stream.on('close', () => {
        restore();
        if (code === undefined) reject(new ConnectionLostError());
        else resolve(code);
      });
      if (o.signal?.aborted) abort();
      else o.signal?.addEventListener('abort', abort, { once: true });
    };
    try {
      if (o.command !== undefined) c.exec(o.command, pty ? { pty } : {}, started);
      else c.shell(pty ?? false, started);
    } catch (err) {
      // Thrown at once when the connection has already gone.
      gone ||= /not connected/i.test((err as Error).message);
      fail(err);
    }
  });
}

/** Words as one command line for `$SHELL -c` (the agent runs exec requests that way). */
export function shellJoin(words: readonly string[]): string {
  return words.map((w) => (/^[A-Za-z0-9_\-.,:/@%+=]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The standard output of a command in the dev container, or undefined when it fails or takes over `timeoutMs`. */
export function captureOutput(c: ssh2.Client, command: string, timeoutMs = 10_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    c.exec(command, (err, stream) => {
      if (err) {
        clearTimeout(timer);
        return resolve(undefined);
      }
      let out = '';
      let code: number | null = null;
      stream.on('data', (d: Buffer) => (out += d.toString('utf8')));
      stream.stderr.resume();
      stream.on('exit', (exitCode: number | null) => (code = exitCode));
      stream.on('close', () => {
        clearTimeout(timer);
        resolve(code === 0 ? out : undefined);
      });
    });
  });
}
