/**
 * The application in a folder, decided in one place for every command (deploy, build, up, down,
 * destroy...): a manifest (devtool.yml) or a Compose application, and which file(s). Without
 * --file, devtool.yml wins, then the first of the Compose file names Docker Compose looks for. An
 * explicit --file is told by what it holds, not by its name (appFileKind): `-f stack.yaml` is a
 * Compose file when it holds `services`. Several files (deploy's repeatable --file) are Compose
 * files merged in order; a manifest comes alone.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DevtoolError } from '../base/errors.ts';
import { defaultComposeFileNames } from '../compose/find.ts';
import { parseYaml } from '../yaml/parse.ts';
import { MANIFEST_FILE } from './manifest-file.ts';

export { MANIFEST_FILE };

/** Absolute paths; `folder` is the one holding the (first) file. */
export type AppSource = { kind: 'manifest'; file: string; folder: string } | { kind: 'compose'; files: string[]; folder: string };

export function isComposeFileName(path: string): boolean {
  return /(^|[-._])compose\.ya?ml$/i.test(basename(path));
}

/** Top-level keys only a manifest has (the manifest refuses any key it does not know). */
const MANIFEST_KEYS = new Set(['build', 'deploy', 'dependencies', 'destroy']);
/** Top-level keys only a Compose file has (`x-` extensions too). */
const COMPOSE_KEYS = new Set(['version', 'volumes', 'networks', 'secrets', 'configs', 'include', 'models', 'endpoints']);
/** Fields only a manifest's dev container has: a file holding nothing but `services` is a manifest when one has them. */
const DEV_SERVICE_FIELDS = new Set([
  'sync',
  'forward',
  'reverse',
  'workdir',
  'autocreate',
  'selector',
  'container',
  'persistentVolume',
  'securityContext',
  'syncOutsideProject',
  'trustContainer',
]);
/** Beyond the largest Compose file devtool loads (compose/load.ts): told by its name, the loader says why it is refused. */
const MAX_SNIFFED_BYTES = 4 * 1024 * 1024;

/**
 * What an explicit file is, by its content: a manifest when a top-level key only a manifest has
 * is there (build, deploy, dependencies, destroy); a Compose file when it holds `services` (or
 * another key only Compose has: volumes, networks, x-...), unless its services have a field only
 * a dev container has (sync, forward...), or have only fields both kinds have and the file is
 * named like the manifest (devtool.yml, dev.devtool.yaml). A file that says neither (empty,
 * unreadable, not YAML) is told by its name: *compose.yaml and the like are Compose files.
 */
export function appFileKind(path: string): 'manifest' | 'compose' {
  const keys = fileKeys(path);
  if (keys) {
    const top = [...keys.top];
    if (top.some((k) => MANIFEST_KEYS.has(k))) return 'manifest';
    if (top.some((k) => COMPOSE_KEYS.has(k) || k.startsWith('x-'))) return 'compose';
    if (keys.top.has('services')) {
      if ([...keys.serviceFields].some((f) => DEV_SERVICE_FIELDS.has(f))) return 'manifest';
      // Services with only fields both kinds have (image, command...): a file named like the manifest is one.
      return /(^|[-._])devtool\.ya?ml$/i.test(basename(path)) ? 'manifest' : 'compose';
    }
  }
  return isComposeFileName(path) ? 'compose' : 'manifest';
}

interface FileKeys {
  top: Set<string>;
  /** The fields of every entry of `services`. */
  serviceFields: Set<string>;
}

/** The top-level keys and service fields of a YAML (or JSON) file; undefined when it cannot be read or is not a map. */
function fileKeys(path: string): FileKeys | undefined {
  let value: unknown;
  try {
    if (statSync(path).size > MAX_SNIFFED_BYTES) return undefined;
    value = parseYaml(readFileSync(path, 'utf8'), path).value;
  } catch {
    // Unreadable or not YAML: told by its name; the loader then says what is wrong, where.
    return undefined;
  }
  if (!isMap(value)) return undefined;
  const serviceFields = new Set<string>();
  if (isMap(value.services)) for (const s of Object.values(value.services)) if (isMap(s)) for (const k of Object.keys(s)) serviceFields.add(k);
  return { top: new Set(Object.keys(value)), serviceFields };
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The application `file` names (relative to `folder`, or absolute; several: Compose files merged
 * in order), or the one found in `folder`; undefined when a file named does not exist, or the
 * folder has neither devtool.yml nor a Compose file (each command says what that means for it).
 * Throws when several files are named and one of them is a manifest.
 */
export function findApp(folder: string, file?: string | readonly string[]): AppSource | undefined {
  const named = file === undefined ? [] : typeof file === 'string' ? [file] : file;
  if (named.length > 0) {
    const paths = named.map((f) => resolve(folder, f));
    if (paths.some((p) => !existsSync(p))) return undefined;
    const kinds = paths.map(appFileKind);
    if (paths.length === 1 && kinds[0] === 'manifest') return { kind: 'manifest', file: paths[0]!, folder: dirname(paths[0]!) };
    const manifest = kinds.indexOf('manifest');
    if (manifest >= 0) {
      throw new DevtoolError(
        `${named[manifest]} is a devtool manifest: a manifest is given alone with --file; several --file values are Compose files, merged in order`,
      );
    }
    return { kind: 'compose', files: paths, folder: dirname(paths[0]!) };
  }
  const manifest = join(folder, MANIFEST_FILE);
  if (existsSync(manifest)) return { kind: 'manifest', file: manifest, folder };
  for (const name of defaultComposeFileNames) {
    const path = join(folder, name);
    if (existsSync(path)) return { kind: 'compose', files: [path], folder };
  }
  return undefined;
}

/** The first of the files named that does not exist (for the "not found" message of a findApp that found nothing). */
export function missingFile(folder: string, files: string | readonly string[]): string | undefined {
  return (typeof files === 'string' ? [files] : files).find((f) => !existsSync(resolve(folder, f)));
}
