/**
 * Ctrl-C (SIGINT) or SIGTERM while a command changes things. Left to Node, the process dies of
 * the signal at once: exit 130, nothing said, and whatever the command had started half done.
 * Here the work gets an AbortSignal (its waits and child processes stop, its own error paths
 * record what they must), is given a short grace to wind down, and then `left()` says in one line
 * what is left and how to go on or undo it; the command ends with that line and exit code 130.
 * A second Ctrl-C during the grace ends the process at once (the handler is gone by then).
 */
import { DevtoolError, ExitCode } from './errors.ts';
import { sleep } from './wait.ts';

export interface InterruptOptions {
  /** What the interrupted work left behind and what to run next; asked once the grace is over. */
  left(): Promise<string>;
  /** How long the work may take to wind down after the signal. */
  graceMs: number;
}

export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>, o: InterruptOptions): Promise<T> {
  const controller = new AbortController();
  let interrupt = () => {};
  const interrupted = new Promise<'interrupted'>((resolve) => {
    interrupt = () => {
      controller.abort(new DevtoolError('interrupted', ExitCode.interrupted));
      resolve('interrupted');
    };
  });
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const running = work(controller.signal);
  try {
    const first = await Promise.race([running.then((value) => ({ value })), interrupted]);
    if (first !== 'interrupted') return first.value;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
  // Abandoned: its failure (the abort, most likely) is not the command's error.
  const wound = running.then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([wound, sleep(o.graceMs)]);
  throw new DevtoolError(`interrupted: ${await o.left()}`, ExitCode.interrupted);
}
