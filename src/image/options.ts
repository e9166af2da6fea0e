/**
 * Build options from the command line (`--no-cache`, `--secret`, `--export-cache`, `--cache-from`)
 * and how they combine with an image's own settings: --no-cache wins, secrets of the command line
 * replace those of the same id, --cache-from sources come before the image's own, --export-cache
 * replaces the image's export targets.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../base/errors.ts';

export interface CliBuildOptions {
  readonly noCache: boolean;
  /** id -> absolute path. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly exportCache?: string;
  readonly cacheFrom: readonly string[];
}

export const NO_CLI_OPTIONS: CliBuildOptions = { noCache: false, secrets: {}, cacheFrom: [] };

/**
 * `--secret id=<ID>,src=<LOCAL_PATH>` (buildx also spells src as `source`, and accepts
 * `type=file`, the only kind a file path can be). Paths are relative to `cwd`; the file must exist.
 */
export function parseSecretFlag(value: string, cwd: string): { id: string; path: string } {
  const bad = (why: string) => new UsageError(`invalid value "${value}" for flag --secret: ${why}; use id=<ID>,src=<LOCAL_PATH>`);
  const fields: Record<string, string> = {};
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw bad(`"${part}" is not KEY=VALUE`);
    const key = part.slice(0, eq).trim().toLowerCase();
    const v = part.slice(eq + 1).trim();
    const canonical = key === 'source' ? 'src' : key;
    if (!['id', 'src', 'type'].includes(canonical)) throw bad(`unknown field "${key}"`);
    if (Object.hasOwn(fields, canonical)) throw bad(`"${key}" is given twice`);
    fields[canonical] = v;
  }
  if (fields.type !== undefined && fields.type !== 'file') throw bad(`type "${fields.type}" is not supported (only file)`);
  if (!fields.id) throw bad('the id is missing');
  if (!fields.src) throw bad('src is missing');
  const path = resolve(cwd, fields.src);
  if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`invalid value "${value}" for flag --secret: file ${fields.src} not found`);
  return { id: fields.id, path };
}

export function parseCliBuildOptions(
  opts: { noCache: boolean; secrets: readonly string[]; exportCache?: string | undefined; cacheFrom: readonly string[] },
  cwd: string,
): CliBuildOptions {
  const secrets: Record<string, string> = {};
  for (const s of opts.secrets) {
    const { id, path } = parseSecretFlag(s, cwd);
    secrets[id] = path;
  }
  const exportCache = opts.exportCache?.trim();
  return { noCache: opts.noCache, secrets, ...(exportCache ? { exportCache } : {}), cacheFrom: opts.cacheFrom.map((c) => c.trim()).filter(Boolean) };
}
