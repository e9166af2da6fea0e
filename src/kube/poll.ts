import { waitUntil } from '../base/wait.ts';
import { DevtoolError } from '../base/errors.ts';
import { isTransient } from './client.ts';
import { describeKubeFailure } from './config.ts';

/**
 * Polls `done` every half second until it says yes, or fails naming `what` after `timeoutMs`.
 * Transient API-server failures (a restart, a dropped connection) just mean "ask again";
 * anything else `done` throws ends the wait at once.
 */
export async function pollUntil(timeoutMs: number, what: string, done: () => Promise<boolean>): Promise<void> {
  await waitUntil(done, {
    timeoutMs,
    intervalMs: POLL_MS,
    retry: isTransient,
    timedOut: (last) => new DevtoolError(`timed out waiting for ${what}${lastTry(last)}`),
  });
}

/** The failure of the last try, when the wait ended on one: the cluster that stopped answering is then named. */
function lastTry(err: unknown): string {
  return err === undefined ? '' : `: ${describeKubeFailure(err)}`;
}

/** How often the waits on the cluster ask. */
export const POLL_MS = 500;
