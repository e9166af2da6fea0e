/**
 * The build context as Docker sends it: the files of the context folder that `.dockerignore` keeps
 * (or `<Dockerfile>.dockerignore` next to the Dockerfile, which replaces it, as in BuildKit), plus
 * the Dockerfile. The same scan feeds the content hash (content-hash.ts) and the tar sent to the
 * daemon, so the tag describes exactly what is built.
 *
 * Patterns follow Docker's rules through @balena/dockerignore (the matcher dockerode uses): paths
 * relative to the context root, a pattern matching a folder excludes everything under it, `!`
 * re-includes. Symbolic links are sent as links, never followed; sockets and devices are skipped.
 * Git's own files (a `.git` folder, or a submodule's `.git` file, at any depth) are never part of
 * it: they change with every commit, so the content tag of one tree would differ between two
 * checkouts, a commit later, or a shallow clone of the same commit.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { DevtoolError } from '../base/errors.ts';
import { buildContextMode } from '../base/platform.ts';
import { readInputFile } from '../io/input-file.ts';

export interface BuildContextEntry {
  /** Path inside the context, with `/` separators. */
  readonly path: string;
  readonly type: 'file' | 'directory' | 'symlink';
  /** Permission bits (mode & 0o7777; on Windows, where files have none, 0o755: buildContextMode). */
  readonly mode: number;
  readonly size: number;
  readonly mtime: Date;
  readonly linkTarget?: string;
  /** sha256 (hex) of a file's content, when the scan was asked to hash. */
  readonly digest?: string;
}

export interface ScannedBuildContext {
  readonly dir: string;
  /** Sorted by path. */
  readonly entries: readonly BuildContextEntry[];
  readonly dockerfile: {
    readonly text: Buffer;
    /** Its name in the tar: its own path when the context holds it, else a name of ours. */
    readonly nameInContext: string;
    /** False when it lies outside the context or is excluded: it is then added to the tar. */
    readonly inContext: boolean;
  };
  /** The ignore file used, if any (absolute path). */
  readonly ignoreFile?: string;
}

/** Reads the context. `hash`: also compute each file's sha256 (for the content tag). */
export async function scanBuildContext(contextDir: string, dockerfile: string, opts: { hash: boolean }): Promise<ScannedBuildContext> {
  const dirStat = await stat(contextDir).catch(() => undefined);
  if (!dirStat?.isDirectory()) throw new DevtoolError(`build context ${contextDir} is not a folder`);
  let text: Buffer;
  try {
    text = await readFile(dockerfile);
  } catch {
    throw new DevtoolError(`Dockerfile ${dockerfile} not found`);
  }
  const ignore = await readIgnoreFile([join(dirname(dockerfile), `${basename(dockerfile)}.dockerignore`), join(contextDir, '.dockerignore')]);
  const entries = await scanTree(contextDir, ignore, opts.hash, { skipGit: true });

  const rel = relative(contextDir, dockerfile).split(sep).join('/');
  const inside = !rel.startsWith('../') && rel !== '..' && !rel.startsWith('/');
  const inContext = inside && entries.some((e) => e.path === rel && e.type === 'file');
  const nameInContext = inContext ? rel : `.dockerfile.devtool-${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
  return { dir: contextDir, entries, dockerfile: { text, nameInContext, inContext }, ...(ignore ? { ignoreFile: ignore.file } : {}) };
}

/**
 * The files of a folder that its own `.dockerignore` keeps, sorted by path: what a mounted host
 * folder contributes to the image baked for it (bake.ts).
 */
export async function scanFolder(dir: string, opts: { hash: boolean }): Promise<{ entries: BuildContextEntry[]; ignoreFile?: string }> {
  const ignore = await readIgnoreFile([join(dir, '.dockerignore')]);
  const entries = await scanTree(dir, ignore, opts.hash, { skipGit: false });
  return { entries, ...(ignore ? { ignoreFile: ignore.file } : {}) };
}

async function scanTree(dir: string, ignore: IgnoreRules | undefined, hash: boolean, opts: { skipGit: boolean }): Promise<BuildContextEntry[]> {
  const entries: BuildContextEntry[] = [];
  const rules = ignore ? ignore.filter : () => true;
  const keep = opts.skipGit ? (p: string) => !GIT_PATH.test(p) && rules(p) : rules;
  await walk(dir, '', keep, ignore?.hasExceptions ?? false, entries);
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (hash) await hashFiles(dir, entries);
  return entries;
}

/** A path that is, or lies in, a `.git` entry. */
const GIT_PATH = /(^|\/)\.git(\/|$)/;

interface IgnoreRules {
  readonly file: string;
  /** True when the path (relative, `/`-separated) is kept. */
  readonly filter: (path: string) => boolean;
  /** `!` patterns exist: an excluded folder may still hold kept files. */
  readonly hasExceptions: boolean;
}

/** The first of `candidates` that exists. */
async function readIgnoreFile(candidates: readonly string[]): Promise<IgnoreRules | undefined> {
  for (const file of candidates) {
    const text = readInputFile(file, 'dockerignore');
    if (text === undefined) continue;
    // A CommonJS module whose module.exports is the factory (typed as an ES default export).
    const dockerignore = (await import('@balena/dockerignore')).default as unknown as typeof import('@balena/dockerignore').default;
    const patterns = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const matcher = dockerignore({ ignorecase: false }).add(patterns);
    return { file, filter: (p) => !matcher.ignores(p), hasExceptions: patterns.some((p) => p.startsWith('!')) };
  }
  return undefined;
}

async function walk(root: string, rel: string, keep: (p: string) => boolean, hasExceptions: boolean, out: BuildContextEntry[]): Promise<void> {
  const dir = rel ? join(root, rel) : root;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new DevtoolError(`cannot read ${dir} in the build context: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  for (const name of names) {
    const path = rel ? `${rel}/${name}` : name;
    const kept = keep(path);
    const st = await lstat(join(root, path));
    const common = { path, mode: buildContextMode(st.mode), mtime: st.mtime };
    if (st.isDirectory()) {
      // An excluded folder is skipped whole, unless a `!` pattern may re-include something in it.
      if (kept) out.push({ ...common, type: 'directory', size: 0 });
      if (kept || hasExceptions) await walk(root, path, keep, hasExceptions, out);
    } else if (!kept) {
    } else if (st.isFile()) {
      out.push({ ...common, type: 'file', size: st.size });
    } else if (st.isSymbolicLink()) {
      out.push({ ...common, type: 'symlink', size: 0, linkTarget: await readlink(join(root, path)) });
    }
  }
}

/** Fills in `digest` for every file, a few at a time. */
async function hashFiles(root: string, entries: BuildContextEntry[]): Promise<void> {
  const files = entries.map((e, i) => [e, i] as const).filter(([e]) => e.type === 'file');
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const [entry, index] = files[next++]!;
      entries[index] = { ...entry, digest: await fileDigest(join(root, entry.path)) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, files.length) }, worker));
}

/** sha256 (hex) of a file's content. */
export function fileDigest(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', (err) => reject(new DevtoolError(`cannot read ${path} in the build context: ${(err as NodeJS.ErrnoException).code ?? err.message}`)))
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * The context as a tar stream (uid/gid 0, like the Docker CLI sends it), the Dockerfile added
 * under its own name when the context does not hold it.
 */
export async function packBuildContext(ctx: ScannedBuildContext): Promise<NodeJS.ReadableStream> {
  const { pack: createPack } = await import('tar-stream');
  const pack = createPack();
  void (async () => {
    const owner = { uid: 0, gid: 0, uname: '', gname: '' };
    for (const e of ctx.entries) {
      const header = { name: e.path, mode: e.mode, mtime: e.mtime, ...owner };
      if (e.type === 'directory') await addEntry(pack, { ...header, type: 'directory' });
      else if (e.type === 'symlink') await addEntry(pack, { ...header, type: 'symlink', linkname: e.linkTarget! });
      else await addFile(pack, { ...header, type: 'file', size: e.size }, join(ctx.dir, e.path));
    }
    if (!ctx.dockerfile.inContext) {
      await addEntry(
        pack,
        { name: ctx.dockerfile.nameInContext, mode: 0o644, mtime: new Date(0), size: ctx.dockerfile.text.length, ...owner },
        ctx.dockerfile.text,
      );
    }
    pack.finalize();
  })().catch((err: unknown) => pack.destroy(err instanceof Error ? err : new Error(String(err))));
  // tar-stream's streams are streamx streams: they pipe into Node's like Node's own.
  return pack as unknown as NodeJS.ReadableStream;
}

type Pack = import('tar-stream').Pack;
type Header = Parameters<Pack['entry']>[0];

function addEntry(pack: Pack, header: Header, content?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, content ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve()));
  });
}

/** Streams a file into the tar, with backpressure; its size must not change since the scan. */
async function addFile(pack: Pack, header: Header, path: string): Promise<void> {
  let done!: Promise<void>;
  const sink = await new Promise<ReturnType<Pack['entry']>>((resolveSink) => {
    done = new Promise((resolve, reject) => {
      resolveSink(
        pack.entry(header, (err) => (err ? reject(new DevtoolError(`cannot send ${path}: ${err.message} (did it change during the build?)`)) : resolve())),
      );
    });
  });
  try {
    for await (const chunk of createReadStream(path)) {
      if (!sink.write(chunk as Buffer)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
    }
  } catch (err) {
    sink.destroy(err as Error);
    throw new DevtoolError(`cannot read ${path} in the build context: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  sink.end(undefined);
  await done;
}
