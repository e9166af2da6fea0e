/**
 * Which Compose file(s) to load: the `--file` values (repeatable, merged in order), else the first
 * of compose.yaml, compose.yml, docker-compose.yaml, docker-compose.yml in the folder, the names
 * and order Docker Compose looks for.
 */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { DevtoolError } from '../base/errors.ts';

export const defaultComposeFileNames = ['compose.yaml', 'compose.yml', 'docker-compose.yaml', 'docker-compose.yml'] as const;

export interface FindOptions {
  /** The folder relative paths resolve against (the working directory, or a manifest's folder). */
  readonly cwd: string;
  /** Explicit files (`--file`, or the Compose files a manifest names). */
  readonly files?: readonly string[];
}

/** Absolute paths of the files to load, in merge order. Throws when none is found. */
export function findComposeFiles(options: FindOptions): string[] {
  const explicit = (options.files ?? []).filter((f) => f !== '');
  if (explicit.length > 0) {
    return explicit.map((f) => {
      const path = isAbsolute(f) ? f : resolve(options.cwd, f);
      if (!existsSync(path)) throw new DevtoolError(`Compose file ${f} not found`);
      if (statSync(path).isDirectory()) throw new DevtoolError(`Compose file ${f} is a folder; name a file`);
      return path;
    });
  }
  for (const name of defaultComposeFileNames) {
    const path = join(options.cwd, name);
    if (existsSync(path) && statSync(path).isFile()) return [path];
  }
  throw new DevtoolError(`no Compose file in ${options.cwd}: looked for ${defaultComposeFileNames.join(', ')}; name one with --file`);
}
