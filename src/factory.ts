/**
 * The one place where a command's dependencies are made: streams, environment, home directory,
 * clock, logger, prompts, the context store and (lazily) Kubernetes clients. Commands take a
 * Factory and nothing global, so a test builds one with its own streams and temporary home.
 */
import type { Writable } from 'node:stream';
import { Analytics } from './analytics/analytics.ts';
import { ContextStore } from './context/store.ts';
import { DevtoolHome } from './home.ts';
import { Logger, type LogLevel } from './log/logger.ts';
import { secretEnvironmentValues } from './log/redact.ts';
import { TerminalPrompter, type Prompter } from './io/prompt.ts';
import { VERSION } from './version.ts';

export interface IOStreams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
}

export interface Factory {
  readonly io: IOStreams;
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly cwd: string;
  readonly home: DevtoolHome;
  readonly version: string;
  readonly log: Logger;
  readonly prompter: Prompter;
  readonly contexts: ContextStore;
  readonly analytics: Analytics;
  now(): Date;
  /** True when stdin and stdout are terminals: prompts and spinners are allowed. */
  readonly interactive: boolean;
}

export interface FactoryOptions {
  io: IOStreams;
  env: NodeJS.ProcessEnv;
  cwd: string;
  now?: () => Date;
  logLevel?: LogLevel;
  prompter?: Prompter;
}

export function createFactory(opts: FactoryOptions): Factory {
  const now = opts.now ?? (() => new Date());
  const home = DevtoolHome.fromEnv(opts.env);
  // stdout first: when it is not a terminal, stdin is never touched (see main.ts).
  const interactive = Boolean(opts.io.stdout.isTTY && opts.io.stdin.isTTY);
  // DEVTOOL_TOKEN, GITHUB_TOKEN...: the log never holds them, whatever line would repeat them.
  const log = new Logger({ file: home.logFile, terminal: opts.io.stderr, level: opts.logLevel ?? 'warn', now, hidden: secretEnvironmentValues(opts.env) });
  const contexts = new ContextStore(home, opts.env);
  let analytics: Analytics | undefined;
  return {
    io: opts.io,
    env: opts.env,
    cwd: opts.cwd,
    home,
    version: VERSION,
    log,
    prompter: opts.prompter ?? new TerminalPrompter(interactive),
    contexts,
    get analytics() {
      analytics ??= new Analytics(home, opts.env, VERSION, now, log);
      return analytics;
    },
    now,
    interactive,
  };
}
