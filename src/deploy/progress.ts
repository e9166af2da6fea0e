/**
 * Progress of a deploy or destroy, one line per event, on stderr (stdout stays clean for results
 * such as `--dry-run` YAML and endpoint URLs), and a copy of everything for the environment's
 * recorded output tail. Steps, results and warnings also go to devtool.log when a log is given,
 * so that the log shows where a slow `up` spent its time.
 */
/** The log, as Progress uses it. */
export interface ProgressLog {
  /** devtool.log only: the terminal gets the line from Progress itself, once. */
  fileOnly(message: string): void;
  /** False when --loglevel hides this level on the terminal (`error` hides warnings). */
  shows(level: 'warn'): boolean;
}

/** Where the lines go: a stream (stderr), or a parent Progress for a nested deploy. */
interface LineSink {
  write(text: string): unknown;
}

export class Progress {
  private readonly lines: string[] = [];

  constructor(
    private readonly out: LineSink,
    private readonly now: () => Date,
    private readonly log?: ProgressLog,
    /** Applied to every line before it goes anywhere: takes out values never to show (stored secrets). */
    private readonly redact?: (line: string) => string,
  ) {}

  /**
   * A Progress for a nested deploy (a dependency): its lines appear here prefixed with `[prefix]`
   * (and are in this transcript), while its own transcript holds only its lines, for its record.
   */
  child(prefix: string): Progress {
    return new Progress(
      {
        write: (text: string) => {
          for (const line of text.replace(/\n$/, '').split('\n')) this.write(`[${prefix}] ${line}`);
        },
      },
      this.now,
      this.log,
      this.redact,
    );
  }

  step(message: string): void {
    this.write(`• ${message}`, true);
  }
  done(message: string): void {
    this.write(`✓ ${message}`, true);
  }
  /** Shown unless --loglevel is error; always logged and in the transcript. */
  warn(message: string): void {
    this.write(`! ${message}`, true, this.log?.shows('warn') ?? true);
  }
  fail(message: string): void {
    this.write(`✗ ${message}`, true);
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

  private write(raw: string, logged = false, shown = true): void {
    const line = this.redact ? this.redact(raw) : raw;
    if (shown) this.out.write(`${line}\n`);
    if (logged) this.log?.fileOnly(`progress: ${line}`);
    this.lines.push(`${this.now().toISOString()} ${line}`);
  }
}
