/**
 * Drives the built CLI in a real pseudo-terminal, as a person would: util-linux `script` allocates
 * the terminal (no native module needed), the test waits for a prompt's text and types keys.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cliPath, ensureBuilt } from './cli.ts';

export interface PtySession {
  /** Resolves when `text` has appeared in the output (after what earlier waits consumed). */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  type(keys: string): void;
  /** Resolves with the exit code once the CLI ends. */
  exit(timeoutMs?: number): Promise<number | null>;
  /** What the terminal showed, as text. */
  output(): string;
  /** The bytes as written, colours and cursor moves included. */
  raw(): string;
}

export const KEY = { enter: '\r', down: '\u001b[B', up: '\u001b[A' } as const;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function runInPty(args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): PtySession {
  ensureBuilt();
  // exec: the CLI replaces script's shell, so its exit code is the CLI's own; a shell left waiting
  // (dash) would die of the terminal's Ctrl-C itself and report 130 whatever the CLI did with it.
  const command = `exec ${[process.execPath, cliPath, ...args].map(shellQuote).join(' ')}`;
  // -e: script exits with the child's code; -q: no banner; /dev/null: no typescript file.
  const child: ChildProcessWithoutNullStreams = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH, TERM: 'xterm', LANG: 'C.UTF-8', ...opts.env },
    stdio: 'pipe',
  });
  let out = '';
  let consumed = 0;
  const listeners = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
    for (const l of listeners) l();
  });
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Prompts are drawn with colours and cursor moves; match on the text alone.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC (\u001b), the character this strips.
  const plain = () => out.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
  return {
    waitFor(text, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const rest = plain().slice(consumed);
          const m =
            typeof text === 'string'
              ? rest.includes(text)
                ? { index: rest.indexOf(text), length: text.length }
                : undefined
              : ((r) => r && { index: r.index, length: r[0].length })(text.exec(rest));
          if (!m) return false;
          consumed += m.index + m.length;
          listeners.delete(check as () => void);
          clearTimeout(timer);
          resolve();
          return true;
        };
        const timer = setTimeout(() => {
          listeners.delete(check as () => void);
          reject(new Error(`timed out waiting for ${String(text)}; output so far:\n${plain()}`));
        }, timeoutMs);
        if (!check()) listeners.add(check as () => void);
      });
    },
    type(keys) {
      child.stdin.write(keys);
    },
    async exit(timeoutMs = 10_000) {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    output: plain,
    raw: () => out,
  };
}
