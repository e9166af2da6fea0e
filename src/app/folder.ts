/**
 * The application in a folder, decided in one place for every command (deploy, build, up, down,
 * destroy...): a manifest (devtool.yml) or a Compose application, and which file. An explicit
 * --file is a Compose file when its name says so (compose.yaml, docker-compose.yml,
 * app.compose.yml...), else a manifest; without --file, devtool.yml wins, then the first of the
 * Compose file names Docker Compose looks for.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { defaultComposeFileNames } from '../compose/find.ts';

/** The manifest's file name: the one spelling of it. */
export const MANIFEST_FILE = 'devtool.yml';

/** Absolute paths; `folder` is the one holding the file. */
export type AppSource = { kind: 'manifest'; file: string; folder: string } | { kind: 'compose'; files: string[]; folder: string };

export function isComposeFileName(path: string): boolean {
  return /(^|[-._])compose\.ya?ml$/i.test(basename(path));
}

/**
 * The application `file` (relative to `folder`, or absolute) names, or the one found in `folder`;
 * undefined when the file named does not exist, or the folder has neither devtool.yml nor a
 * Compose file (each command says what that means for it).
 */
export function findApp(folder: string, file?: string): AppSource | undefined {
  if (file !== undefined) {
    const path = resolve(folder, file);
    if (!existsSync(path)) return undefined;
    return isComposeFileName(path) ? { kind: 'compose', files: [path], folder: dirname(path) } : { kind: 'manifest', file: path, folder: dirname(path) };
  }
  const manifest = join(folder, MANIFEST_FILE);
  if (existsSync(manifest)) return { kind: 'manifest', file: manifest, folder };
  for (const name of defaultComposeFileNames) {
    const path = join(folder, name);
    if (existsSync(path)) return { kind: 'compose', files: [path], folder };
  }
  return undefined;
}
