/**
 * Loading devtool.yml: parse with positions, decode every section (unknown fields and wrong types
 * are located problems with a "did you mean"), expand ${VAR} in values from the environment, then
 * check what spans sections. Any problem ends in one LocatedError (FILE:LINE:COL); nothing is
 * half-loaded.
 */
import { existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { DevtoolError } from '../base/errors.ts';
import { readInputFile } from '../io/input-file.ts';
import { LocatedError } from '../yaml/errors.ts';
import { parseYaml } from '../yaml/parse.ts';
import { didYouMean } from '../base/suggest.ts';
import { Cursor, isMap, typeName } from './decode.ts';
import type { Manifest } from './model.ts';
import { projectScope } from './project-scope.ts';
import { manifestDecoder, normalizeManifest, type DecodedManifest } from './sections.ts';

export interface ManifestLoadOptions {
  /** File names in messages are relative to it. */
  readonly cwd: string;
  /** Variables for ${VAR} (the shell's environment, with --var values above it). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The home directory (sync folders may not be it); default: the process's. */
  readonly home?: string;
}

export function loadManifest(file: string, opts: ManifestLoadOptions): Manifest {
  const path = resolve(opts.cwd, file);
  const text = readInputFile(path, 'manifest', relative(opts.cwd, path) || path);
  if (text === undefined) throw new DevtoolError(existsSync(path) ? `manifest ${file} is not a file` : `manifest ${file} not found`);
  return loadManifestText(text, path, opts);
}

/** The same as loadManifest for a text already read; `path` is the file's absolute path. */
export function loadManifestText(text: string, path: string, opts: ManifestLoadOptions): Manifest {
  const display = relative(opts.cwd, path) || path;
  const parsed = parseYaml(text, display);
  // An empty file is a manifest with nothing in it (init's starting point), as in Okteto.
  const root = parsed.value === null ? {} : parsed.value;
  if (parsed.value !== null && !isMap(root)) {
    throw new LocatedError({
      pos: { file: display, line: 1, col: 1 },
      message: `a manifest must be a map of sections (build, deploy, dependencies, destroy, services), not ${typeName(root)}`,
    });
  }
  const lookup = (name: string) => (Object.hasOwn(opts.env, name) ? opts.env[name] : undefined);
  const c = new Cursor(root, parsed.sources, lookup, projectScope(dirname(path), opts.home));
  const decoded = manifestDecoder.decode(root, [], c);
  const manifest = decoded ? normalizeManifest(decoded) : undefined;
  if (manifest) checkReferences(manifest, c);
  if (c.problems.length > 0 || !manifest) throw new LocatedError(c.problems);
  return {
    file: path,
    folder: dirname(path),
    text,
    ...manifest,
    warnings: [...c.unset].sort().map((name) => `variable ${name} is not set: using an empty string`),
  };
}

/** What spans sections: build images depending on images of the section, without cycles. */
function checkReferences(m: DecodedManifest, c: Cursor): void {
  const images = Object.keys(m.build);
  for (const [name, image] of Object.entries(m.build)) {
    image.dependsOn.forEach((dep, i) => {
      if (!Object.hasOwn(m.build, dep))
        c.fail(
          ['build', name, 'depends_on', i],
          `unknown image ${JSON.stringify(dep)}${didYouMean(dep, images)}: depends_on names images of the build section`,
        );
    });
  }
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (name: string, chain: string[]): boolean => {
    if (done.has(name)) return false;
    if (visiting.has(name)) {
      c.fail(['build', name, 'depends_on'], `build images depend on each other in a cycle: ${[...chain.slice(chain.indexOf(name)), name].join(' -> ')}`);
      return true;
    }
    visiting.add(name);
    for (const dep of m.build[name]?.dependsOn ?? []) if (Object.hasOwn(m.build, dep) && visit(dep, [...chain, name])) return true;
    visiting.delete(name);
    done.add(name);
    return false;
  };
  for (const name of images) if (visit(name, [])) break;
}
