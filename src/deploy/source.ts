/**
 * What `deploy` deploys: a manifest (devtool.yml) or a Compose file. An explicit --file is a
 * Compose file when its name says so (compose.yaml, docker-compose.yml, app.compose.yml...);
 * without --file, devtool.yml wins, then the Compose file names Docker Compose looks for.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { DevtoolError } from '../cli/errors.ts';
import { defaultComposeFileNames } from '../compose/find.ts';

export type DeploySource = { kind: 'manifest'; file: string; folder: string } | { kind: 'compose'; files: string[]; folder: string };

export const DEFAULT_MANIFEST = 'devtool.yml';

export function isComposeFileName(path: string): boolean {
  return /(^|[-._])compose\.ya?ml$/i.test(basename(path));
}

export function resolveDeploySource(cwd: string, file: string | undefined): DeploySource {
  if (file !== undefined) {
    const path = isAbsolute(file) ? file : resolve(cwd, file);
    if (!existsSync(path)) throw new DevtoolError(`${file} not found`);
    return isComposeFileName(path) ? { kind: 'compose', files: [path], folder: dirname(path) } : { kind: 'manifest', file: path, folder: dirname(path) };
  }
  const manifest = join(cwd, DEFAULT_MANIFEST);
  if (existsSync(manifest)) return { kind: 'manifest', file: manifest, folder: cwd };
  for (const name of defaultComposeFileNames) {
    const path = join(cwd, name);
    if (existsSync(path)) return { kind: 'compose', files: [path], folder: cwd };
  }
  throw new DevtoolError(`nothing to deploy in ${cwd}: no ${DEFAULT_MANIFEST} and no Compose file (${defaultComposeFileNames.join(', ')}); name one with --file`);
}
