/**
 * Errors a command can end with, and the exit code each maps to.
 * Every error is printed as one line on stderr; the exit codes are documented in docs/configuration.md.
 */
export const ExitCode = {
  ok: 0,
  /** The command ran and failed (cluster error, failed deploy, bad manifest...). */
  failure: 1,
  /** The command line itself is wrong: unknown flag, bad value, missing argument. */
  usage: 2,
  /** The feature is not available here: it needs the devtool service, or a login to it. */
  unavailable: 3,
  /** Interrupted by the user (Ctrl-C). */
  interrupted: 130,
} as const;

export class DevtoolError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.failure,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A wrong flag, value or argument. `hint` names the help command to run. */
export class UsageError extends DevtoolError {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message, ExitCode.usage);
  }
}

/** A feature that exists in the command surface but is not available (yet, or on this kind of context). */
export class UnavailableError extends DevtoolError {
  constructor(message: string) {
    super(message, ExitCode.unavailable);
  }
}

/** Thrown when a command would prompt but there is no terminal to prompt on. */
export class NeedsInputError extends UsageError {}
