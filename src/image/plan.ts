/**
 * What to build: the images of a manifest's `build` section (all, or the named ones with the images
 * they depend on, in depends_on order), or one Dockerfile given with `build -f`. Paths are resolved
 * and checked here, before anything is built, so a missing Dockerfile, context or secret file is
 * one located error (FILE:LINE:COL of the field in devtool.yml) and nothing is half-done.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { UsageError } from '../base/errors.ts';
import type { Manifest } from '../manifest/model.ts';
import { LocatedError, type Path, type Problem } from '../yaml/errors.ts';
import { parseYaml } from '../yaml/parse.ts';
import { didYouMean } from '../base/suggest.ts';
import type { BuildInput } from './backend.ts';
import type { CliBuildOptions } from './options.ts';

/** One image to build, with every path absolute. */
export interface ImageSpec extends BuildInput {
  /** Name in the build section; the folder name for `build -f`. */
  readonly name: string;
  /** The image reference the user chose (`image`); absent: chosen in the context's registry. */
  readonly image?: string;
  readonly dependsOn: readonly string[];
}

/** Every image of the manifest's build section, checked (all problems found in one pass). */
export function manifestImages(manifest: Manifest, cwd: string): ImageSpec[] {
  const problems: Problem[] = [];
  let located: ((path: Path) => Problem['pos']) | undefined;
  const fail = (path: Path, message: string) => {
    // Positions come from the manifest's text, parsed again only when there is a problem to report.
    located ??= positions(manifest, cwd);
    problems.push({ pos: located(path), path, message });
  };
  const specs: ImageSpec[] = [];
  for (const [name, b] of Object.entries(manifest.build)) {
    const contextDir = resolve(manifest.folder, b.context);
    const dockerfile = resolve(contextDir, b.dockerfile);
    if (!isFolder(contextDir)) {
      fail(['build', name, 'context'], `build context ${shown(contextDir, cwd)} is not a folder`);
    } else if (!isFile(dockerfile)) {
      fail(['build', name, 'dockerfile'], `Dockerfile ${shown(dockerfile, cwd)} not found`);
    }
    const secrets: Record<string, string> = {};
    for (const [id, file] of Object.entries(b.secrets)) {
      secrets[id] = resolve(manifest.folder, file);
      if (!isFile(secrets[id]!)) fail(['build', name, 'secrets', id], `secret file ${shown(secrets[id]!, cwd)} not found`);
    }
    specs.push({
      name,
      contextDir,
      dockerfile,
      ...(b.target !== undefined ? { target: b.target } : {}),
      args: b.args,
      secrets,
      noCache: false,
      cacheFrom: b.cacheFrom,
      exportCache: b.exportCache,
      ...(b.image !== undefined ? { image: b.image } : {}),
      dependsOn: b.dependsOn,
    });
  }
  if (problems.length > 0) throw new LocatedError(problems);
  return specs;
}

function positions(manifest: Manifest, cwd: string): (path: Path) => Problem['pos'] {
  const parsed = parseYaml(manifest.text, relative(cwd, manifest.file) || manifest.file);
  return (path) => parsed.sources.locate(parsed.value, path);
}

/**
 * The images to build for `names` (all when empty) and every image they depend on, dependencies
 * first, otherwise in the manifest's order. The manifest loader has already refused cycles.
 */
export function selectImages(specs: readonly ImageSpec[], names: readonly string[]): ImageSpec[] {
  const byName = new Map(specs.map((s) => [s.name, s]));
  for (const n of names) {
    if (!byName.has(n)) {
      const known = [...byName.keys()];
      throw new UsageError(
        known.length === 0
          ? `unknown image "${n}": the manifest's build section is empty`
          : `unknown image "${n}"${didYouMean(n, known)}: the build section has ${known.join(', ')}`,
      );
    }
  }
  const wanted = names.length === 0 ? specs.map((s) => s.name) : names;
  const out: ImageSpec[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const spec = byName.get(name)!;
    for (const dep of spec.dependsOn) visit(dep);
    out.push(spec);
  };
  for (const n of wanted) visit(n);
  return out;
}

/** An image with the command line's options applied (see options.ts for the rules). */
export function withCliOptions(spec: ImageSpec, cli: CliBuildOptions): ImageSpec {
  return {
    ...spec,
    noCache: spec.noCache || cli.noCache,
    secrets: { ...spec.secrets, ...cli.secrets },
    cacheFrom: [...new Set([...cli.cacheFrom, ...spec.cacheFrom])],
    exportCache: cli.exportCache !== undefined ? [cli.exportCache] : spec.exportCache,
  };
}

/**
 * `build -f PATH`: PATH is a Dockerfile when its name says so (Dockerfile, Containerfile,
 * *.Dockerfile, Dockerfile.*), or when it is not YAML and starts like one (FROM, ARG, a # syntax
 * line); otherwise it is a manifest.
 */
export function isDockerfilePath(path: string): boolean {
  const name = basename(path).toLowerCase();
  if (/(^|\.)(dockerfile|containerfile)($|\.)/.test(name)) return true;
  if (/\.ya?ml$/.test(name)) return false;
  try {
    const head = readFileSync(path, 'utf8').slice(0, 4096);
    const first = head.split('\n').find((l) => l.trim() !== '' && !/^\s*#(?!\s*(syntax|escape|check)\s*=)/i.test(l));
    return first !== undefined && /^\s*(FROM|ARG|#\s*(syntax|escape|check)\s*=)/i.test(first);
  } catch {
    return false;
  }
}

/** The image of `build -f Dockerfile`: context = the Dockerfile's folder, named after the folder. */
export function dockerfileImage(path: string, cwd: string): ImageSpec {
  const dockerfile = isAbsolute(path) ? path : resolve(cwd, path);
  if (!isFile(dockerfile)) throw new UsageError(`invalid value "${path}" for flag --file: Dockerfile ${path} not found`);
  const contextDir = dirname(dockerfile);
  return { name: basename(contextDir), contextDir, dockerfile, args: {}, secrets: {}, noCache: false, cacheFrom: [], exportCache: [], dependsOn: [] };
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

function isFolder(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

function shown(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') ? rel : path;
}
