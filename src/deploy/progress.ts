/**
 * Progress of a deploy or destroy, one line per event, on stderr (stdout stays clean for results
 * such as `--dry-run` YAML and endpoint URLs), and a copy of everything for the environment's
 * recorded output tail.
 */
import type { Writable } from 'node:stream';

export class Progress {
  private readonly lines: string[] = [];

  constructor(
    private readonly out: Writable,
    private readonly now: () => Date,
  ) {}

  step(message: string): void {
    this.write(`• ${message}`);
  }
  done(message: string): void {
    this.write(`✓ ${message}`);
  }
  warn(message: string): void {
    this.write(`! ${message}`);
  }
  fail(message: string): void {
    this.write(`✗ ${message}`);
  }
  /** Indented detail lines (a log tail). */
  detail(text: string): void {
    for (const line of text.split('\n')) this.write(`    ${line}`);
  }

  /** A line of a command's output, prefixed with the command's name. */
  output(name: string, line: string): void {
    this.write(`[${name}] ${line}`);
  }

  /** Everything written, with timestamps, for the recorded state. */
  transcript(): string {
    return this.lines.join('\n');
  }

  private write(line: string): void {
    this.out.write(`${line}\n`);
    this.lines.push(`${this.now().toISOString()} ${line}`);
  }
}
