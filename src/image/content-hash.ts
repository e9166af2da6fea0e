/**
 * The content tag of an image: a hash of everything that decides what a build produces, so that
 * "this image is already pushed" is a registry lookup of one tag, and "missing images are built"
 * means exactly the images whose inputs changed. Inputs: the Dockerfile's text, every file
 * `.dockerignore` keeps (path, type, permission bits, content or link target; not mtimes, not
 * owners; never git's own files: build-context.ts), the build arguments, the target stage and the ids of the secrets (never their
 * contents). Cache options and --no-cache do not change what is built, so they are not inputs.
 */
import { createHash } from 'node:crypto';
import type { BuildContextEntry } from './build-context.ts';

/** Bump when the inputs or their encoding change: every tag changes with it. */
const SCHEME = 'devtool-build-hash v1';
export const TAG_PREFIX = 'devtool-';
/** 24 hex digits: 96 bits, no collision in practice, and a tag that stays readable. */
const TAG_HEX_LENGTH = 24;

export interface HashInputs {
  readonly dockerfile: Buffer;
  /** From a scan with `hash: true`; sorted by path. */
  readonly entries: readonly BuildContextEntry[];
  readonly args: Readonly<Record<string, string>>;
  readonly target?: string;
  readonly secretIds: readonly string[];
}

/** sha256 (hex) of the inputs. */
export function contentHash(inputs: HashInputs): string {
  const h = createHash('sha256');
  // Every field is length-prefixed (JSON strings), so no two different inputs encode alike.
  const field = (...parts: (string | number)[]) => h.update(`${JSON.stringify(parts)}\n`);
  field(SCHEME);
  field('dockerfile', createHash('sha256').update(inputs.dockerfile).digest('hex'));
  field('target', inputs.target ?? '');
  for (const key of Object.keys(inputs.args).sort()) field('arg', key, inputs.args[key]!);
  for (const id of [...new Set(inputs.secretIds)].sort()) field('secret', id);
  for (const e of inputs.entries) {
    if (e.type === 'file' && e.digest === undefined) throw new Error(`contentHash: ${e.path} was scanned without hashing`);
    field(e.type, e.path, e.mode, e.type === 'file' ? e.digest! : (e.linkTarget ?? ''));
  }
  return h.digest('hex');
}

/** The tag an image of this hash is pushed under. */
export function contentTag(hash: string): string {
  return `${TAG_PREFIX}${hash.slice(0, TAG_HEX_LENGTH)}`;
}
