/**
 * Reading the files devtool parses: each kind has a size limit, checked before the file is read,
 * so a wrong or hostile file ends in one line at once instead of seconds of parsing and a gigabyte
 * of memory (a 59 MB manifest took 5.3 s and 1.1 GB). The limits are far above real files (the
 * largest Compose files seen are a few hundred KB); docs/manifest.md and docs/compose.md list them.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { DevtoolError } from '../base/errors.ts';

const MiB = 1024 * 1024;

export const INPUT_LIMITS = {
  manifest: { what: 'a manifest', bytes: 4 * MiB },
  compose: { what: 'a Compose file', bytes: 4 * MiB },
  env: { what: 'an env file', bytes: 1 * MiB },
  dockerignore: { what: 'a .dockerignore file', bytes: 1 * MiB },
  stignore: { what: 'a .stignore file', bytes: 1 * MiB },
} as const;

export type InputKind = keyof typeof INPUT_LIMITS;

/**
 * The text of a file devtool parses; undefined when there is no regular file at `path` (missing, a
 * folder such as a virtualenv named `.env`, unreadable). Throws a DevtoolError naming `shown`, the
 * size and the limit when the file is too large.
 */
export function readInputFile(path: string, kind: InputKind, shown: string = path): string | undefined {
  const { what, bytes: limit } = INPUT_LIMITS[kind];
  let fd: number;
  try {
    // Non-blocking, so that a named pipe is refused below instead of waiting for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    if (stat.size > limit) {
      // Just over the limit would read "4 MiB: ... at most 4 MiB": then the exact size.
      const size = formatSize(stat.size) === formatSize(limit) ? `${stat.size} bytes` : formatSize(stat.size);
      throw new DevtoolError(`${shown} is ${size}: ${what} may be at most ${formatSize(limit)}`);
    }
    return readFileSync(fd, 'utf8');
  } catch (err) {
    if (err instanceof DevtoolError) throw err;
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** 512 bytes, 3.5 KiB, 59.2 MiB, 4 MiB. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const power = Math.min(Math.floor(Math.log2(bytes) / 10), 3);
  return `${Number((bytes / 1024 ** power).toFixed(1))} ${['', 'KiB', 'MiB', 'GiB'][power]}`;
}
