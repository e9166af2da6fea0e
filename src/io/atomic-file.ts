/**
 * Writes a file so that a crash never leaves it half-written: write a temporary sibling, fsync,
 * rename over the target. Files holding tokens or keys are written with mode 0600. The mode is set
 * exactly (whatever the umask), so a rewritten file keeps the mode it had.
 *
 * On Windows a rename over a file another program holds open (a virus scanner, an indexer) fails
 * for a moment: it is tried again for up to a second (renameRefusedForNow).
 */
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { renameRefusedForNow } from '../base/platform.ts';

export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    fchmodSync(fd, mode);
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameOver(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

const RENAME_TRIES = 10;
const RENAME_PAUSE_MS = 100;

function renameOver(from: string, to: string): void {
  for (let tries = 1; ; tries++) {
    try {
      renameSync(from, to);
      return;
    } catch (err) {
      if (tries >= RENAME_TRIES || !renameRefusedForNow((err as NodeJS.ErrnoException).code)) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RENAME_PAUSE_MS);
    }
  }
}
