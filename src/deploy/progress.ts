/**
 * Progress of a deploy or destroy, one line per event, on stderr (stdout stays clean for results
 * such as `--dry-run` YAML and endpoint URLs), and a copy of everything for the environment's
 * recorded output tail. Steps, results and warnings also go to devtool.log when a log is given,
 * so that the log shows where a slow `up` spent its time. On a terminal the marks are coloured
 * (io/style.ts); the log and the transcript get plain text. A long wait says every HEARTBEAT_MS
 * what it still awaits and for how long (`waiting`), so that it is not taken for a hang.
 */
import { formatDuration } from '../base/duration.ts';
import { PLAIN, type Style } from '../io/style.ts';

/** How often a wait that goes on says so. */
export const HEARTBEAT_MS = 10_000;

/** The log, as Progress uses it. */
export interface ProgressLog {
  /** devtool.log only: the terminal gets the line from Progress itself, once. */
  fileOnly(message: string): void;
  /** False when --loglevel hides this level on the terminal (`error` hides warnings). */
  shows(level: 'warn'): boolean;
  /** How the terminal's lines are coloured. */
  readonly style?: Style;
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
    private readonly style: Style = log?.style ?? PLAIN,
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
      // Its lines become this one's, transcript included: they stay plain.
      PLAIN,
    );
  }

  step(message: string): void {
    this.write(`• ${message}`, true, true, this.style.dim);
  }
  done(message: string): void {
    this.write(`✓ ${message}`, true, true, this.style.ok);
  }
  /** Shown unless --loglevel is error; always logged and in the transcript. */
  warn(message: string): void {
    this.write(`! ${message}`, true, this.shows(), this.style.warn);
  }
  fail(message: string): void {
    this.write(`✗ ${message}`, true, true, this.style.error);
  }

  /**
   * Resolves as `work` does; meanwhile, every HEARTBEAT_MS, a line naming what is still awaited
   * (`what()`, nothing when it returns '') and since when: `… still waiting for api, db (20s)`.
   * Shown unless --loglevel is error, as warnings; neither logged nor in the transcript, which
   * have their own timestamps.
   */
  async waiting<T>(what: () => string, work: Promise<T>): Promise<T> {
    const started = this.now().getTime();
    const timer = setInterval(() => {
      const awaited = what();
      if (!awaited || !this.shows()) return;
      const elapsed = Math.round((this.now().getTime() - started) / 1000) * 1000;
      const line = `… still waiting for ${awaited} (${formatDuration(elapsed)})`;
      this.out.write(`${this.style.dim(this.redact ? this.redact(line) : line)}\n`);
    }, HEARTBEAT_MS);
    // Never what keeps the process alive: work abandoned after Ctrl-C may settle late, or not at all.
    timer.unref();
    try {
      return await work;
    } finally {
      clearInterval(timer);
    }
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

  private shows(): boolean {
    return this.log?.shows('warn') ?? true;
  }

  /** `paint` colours the line's first character, its mark, on the terminal only. */
  private write(raw: string, logged = false, shown = true, paint?: (mark: string) => string): void {
    const line = this.redact ? this.redact(raw) : raw;
    if (shown) this.out.write(`${paint ? paint(line.slice(0, 1)) + line.slice(1) : line}\n`);
    if (logged) this.log?.fileOnly(`progress: ${line}`);
    this.lines.push(`${this.now().toISOString()} ${line}`);
  }
}
