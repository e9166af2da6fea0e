import { DevtoolError } from '../cli/errors.ts';
import { isTransient } from './client.ts';

/**
 * Polls `done` every half second until it says yes, or fails naming `what` after `timeoutMs`.
 * Transient API-server failures (a restart, a dropped connection) just mean "ask again";
 * anything else `done` throws ends the wait at once.
 */
export async function pollUntil(timeoutMs: number, what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await done()) return;
    } catch (err) {
      if (!isTransient(err)) throw err;
    }
    if (Date.now() > deadline) throw new DevtoolError(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
