/**
 * The shell of `up` in a terminal. It is a process of the dev pod, so it ends with that pod (a
 * `devtool restart`, a deleted or evicted pod) and with the SSH connection (a dropped
 * port-forward: the agent hangs up a session whose connection went). The tunnel reconnects by
 * itself and sync and forwards go on over the new connection; here the shell is opened again in
 * the dev pod it reconnected to, saying so. It ends when the shell exits, or when `stop` fires
 * (SIGTERM from `devtool down`, Ctrl-C while no shell is open). Apart from SSH and the terminal,
 * so that a test drives it with fakes.
 */
import { ConnectTimeoutError } from './reconnect.ts';
import { ConnectionLostError } from './ssh-program.ts';

/** How the shell ended: it exited (with its code), or `up` was asked to stop (the abort reason). */
export type ShellEnd = { exited: number } | { stopped: unknown };

export interface ShellLoopOptions<C> {
  /** The live connection, waiting for the next one; rejects after its own timeout. */
  connection(): Promise<C>;
  /** One shell on `c`, until it exits (its code); rejects with ConnectionLostError when the connection goes first, with the signal's reason when stopped. */
  shell(c: C, signal: AbortSignal): Promise<number>;
  /** The dev pod of the live connection, for the notice. */
  connectedPod(): string | undefined;
  notice(message: string): void;
  /** Aborted when `up` is to stop; its reason is returned as `stopped`. */
  stop: AbortSignal;
  /** devtool.log: why a wait for the connection is still going on. */
  debug(message: string): void;
}

export const SHELL_LOST =
  'the shell ended with its connection to the dev container (its pod restarted, or the connection dropped); ' +
  'it opens again once the dev container answers (Ctrl-C ends up here)';

export async function shellLoop<C>(o: ShellLoopOptions<C>): Promise<ShellEnd> {
  let reopening = false;
  for (;;) {
    const c = await untilConnected(o);
    if (c === undefined) return { stopped: o.stop.reason };
    if (reopening) o.notice(`the shell is open again, in pod ${o.connectedPod() ?? '(unknown)'}`);
    try {
      return { exited: await o.shell(c, o.stop) };
    } catch (err) {
      if (o.stop.aborted) return { stopped: o.stop.reason };
      if (!(err instanceof ConnectionLostError)) throw err;
      o.notice(SHELL_LOST);
      reopening = true;
    }
  }
}

/** The next connection, however long the dev pod takes (a restart pulls images); undefined once stopped. */
async function untilConnected<C>(o: ShellLoopOptions<C>): Promise<C | undefined> {
  const stopped = new Promise<undefined>((resolve) => {
    if (o.stop.aborted) resolve(undefined);
    else o.stop.addEventListener('abort', () => resolve(undefined), { once: true });
  });
  for (;;) {
    if (o.stop.aborted) return undefined;
    try {
      return await Promise.race([o.connection(), stopped]);
    } catch (err) {
      // Only the wait's timeout: a closed tunnel, or anything else, is not for this loop to swallow.
      if (!(err instanceof ConnectTimeoutError)) throw err;
      o.debug(`up: still waiting for the dev container to reopen the shell: ${err.message}`);
    }
  }
}
