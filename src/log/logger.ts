/**
 * Two sinks: the terminal (stderr) at the level chosen with --loglevel, and `devtool.log` in the
 * home directory, which always gets debug detail. The file is rotated when it passes maxBytes
 * (keeping `keep` old files), also in the middle of a long-running command, so it cannot grow
 * without bound. Writes are synchronous, so nothing is lost when a command exits or crashes.
 * Values the file must not hold (a token, a secret-named --var, DEVTOOL_TOKEN: see `hide`) are
 * replaced by *** in every line written to it, whichever code wrote the line.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { PLAIN, type Style } from '../io/style.ts';
import { KnownValues, NOT_LOGGED } from './redact.ts';

export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

export interface LoggerOptions {
  file: string;
  terminal: Writable;
  level: LogLevel;
  now: () => Date;
  maxBytes?: number;
  keep?: number;
  /** Values never to write to the file (see `hide`). */
  hidden?: Iterable<string>;
  /** How lines on the terminal are coloured (io/style.ts: plain unless it is a terminal that wants colour). */
  style?: Style;
}

export class Logger {
  private fd: number | undefined;
  /** Size of the open log file, as far as this process knows. */
  private size = 0;
  private fileBroken = false;
  private level: LogLevel;
  private readonly hidden: KnownValues;
  /** How lines on the terminal are coloured; others writing there (deploy/progress.ts) use it too. */
  readonly style: Style;

  constructor(private readonly opts: LoggerOptions) {
    this.level = opts.level;
    this.hidden = new KnownValues(opts.hidden);
    this.style = opts.style ?? PLAIN;
  }

  /**
   * Values replaced by *** in every later line of the file, wherever they appear (an error
   * message or a stack that repeats them too). Values shorter than 6 characters are not (see
   * KnownValues): the command line itself is masked by its structure (src/cli/command-line.ts).
   */
  hide(values: Iterable<string>): void {
    this.hidden.add(values);
  }

  /** True when a message of this level reaches the terminal. */
  shows(level: LogLevel): boolean {
    return logLevels.indexOf(level) >= logLevels.indexOf(this.level);
  }

  setLevel(level: LogLevel): void {
    this.level = level;
  }

  debug(msg: string, ...details: unknown[]): void {
    this.write('debug', msg, details);
  }
  info(msg: string, ...details: unknown[]): void {
    this.write('info', msg, details);
  }
  warn(msg: string, ...details: unknown[]): void {
    this.write('warn', msg, details);
  }
  error(msg: string, ...details: unknown[]): void {
    this.write('error', msg, details);
  }

  /** Writes to the log file only, whatever the level (for details the terminal should not show). */
  fileOnly(msg: string, ...details: unknown[]): void {
    this.toFile('debug', msg, details);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private write(level: LogLevel, msg: string, details: unknown[]): void {
    this.toFile(level, msg, details);
    if (this.shows(level)) {
      const tag =
        level === 'info' ? '' : `${level === 'debug' ? this.style.dim('debug:') : level === 'warn' ? this.style.warn('warn:') : this.style.error('error:')} `;
      this.opts.terminal.write(`${tag}${msg}${formatDetails(details)}\n`);
    }
  }

  private toFile(level: LogLevel, msg: string, details: unknown[]): void {
    if (this.fileBroken) return;
    try {
      const line = this.hidden.replace(`${this.opts.now().toISOString()} ${level.toUpperCase().padEnd(5)} ${msg}${formatDetails(details)}\n`, NOT_LOGGED);
      this.size += writeSync(this.open(), line);
    } catch {
      // A read-only or full home must not break the command itself.
      this.fileBroken = true;
    }
  }

  private open(): number {
    const { file, maxBytes = 5 * 1024 * 1024, keep = 2 } = this.opts;
    if (this.fd !== undefined && this.size < maxBytes) return this.fd;
    this.close();
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    if (existsSync(file) && statSync(file).size >= maxBytes) rotate(file, keep);
    this.fd = openSync(file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
    return this.fd;
  }
}

/** devtool.log -> devtool.log.1 -> devtool.log.2; the oldest is dropped. */
function rotate(file: string, keep: number): void {
  rmSync(`${file}.${keep}`, { force: true });
  for (let i = keep - 1; i >= 1; i--) {
    if (existsSync(`${file}.${i}`)) renameSync(`${file}.${i}`, `${file}.${i + 1}`);
  }
  renameSync(file, `${file}.1`);
}

function formatDetails(details: unknown[]): string {
  if (details.length === 0) return '';
  return ` ${details.map((d) => (typeof d === 'string' ? d : inspect(d, { depth: 4, breakLength: Infinity }))).join(' ')}`;
}
