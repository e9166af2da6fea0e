/**
 * Loading a Compose project: read the file(s), parse with positions, interpolate variables,
 * validate each file against the schema, merge the files in order, then normalize and check the
 * result. Any problem ends in one LocatedError (FILE:LINE:COL) holding every problem found by the
 * step that failed; nothing is half-loaded.
 */
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { DevtoolError } from '../base/errors.ts';
import { readInputFile } from '../io/input-file.ts';
import { LocatedError, type Path, type Problem } from '../yaml/errors.ts';
import { parseYaml, SourceMap } from '../yaml/parse.ts';
import { parseDotenv } from './dotenv.ts';
import { findComposeFiles } from './find.ts';
import { interpolateTree, type Lookup } from './interpolate.ts';
import { mergeComposeTrees } from './merge.ts';
import type { ComposeProject } from './model.ts';
import { isObj, NormalizeState, show, type FileAccess } from './normalize/state.ts';
import { normalizeProject } from './normalize/project.ts';
import { validateComposeSchema } from './schema/validate.ts';

export interface LoadOptions {
  /** The working directory: relative paths start here, and file names in messages are relative to it. */
  readonly cwd: string;
  /** Explicit Compose files (`--file`, repeatable, or named by a manifest); else the default names in `cwd`. */
  readonly files?: readonly string[];
  /** The shell environment (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The user's stored secrets: the lowest-precedence source of variables. */
  readonly secrets?: Readonly<Record<string, string>>;
  /**
   * Hears of every variable a value needs that neither the shell nor .env sets (the names stored
   * secrets could give): deploy asks the service for them only when there is one.
   */
  readonly onSecretLookup?: (name: string) => void;
  /** File access (default: the real file system); tests pass an in-memory one. */
  readonly fileAccess?: FileAccess;
}

export const nodeFileAccess: FileAccess = { readFile: readInputFile };

/** Loads and checks a Compose project. Throws LocatedError for problems in the files, DevtoolError otherwise. */
export function loadCompose(options: LoadOptions): ComposeProject {
  const files = options.fileAccess ?? nodeFileAccess;
  const paths =
    options.files && options.files.length > 0
      ? options.files.map((f) => (isAbsolute(f) ? f : resolve(options.cwd, f)))
      : findComposeFiles({ cwd: options.cwd });
  const texts = paths.map((path, i) => {
    const shown = options.files?.[i] ?? (relative(options.cwd, path) || path);
    const text = files.readFile(path, 'compose', shown);
    if (text === undefined) throw new DevtoolError(`Compose file ${shown} not found`);
    return text;
  });
  return loadComposeTexts(
    paths.map((path, i) => ({ path, text: texts[i]! })),
    options,
  );
}

export interface ComposeText {
  /** Absolute path of the file (its folder is where relative paths resolve). */
  readonly path: string;
  readonly text: string;
}

/** The same as loadCompose, for texts already read (the first one's folder is the project folder). */
export function loadComposeTexts(inputs: readonly ComposeText[], options: LoadOptions): ComposeProject {
  if (inputs.length === 0) throw new DevtoolError('no Compose file to load');
  const files = options.fileAccess ?? nodeFileAccess;
  const env = options.env ?? process.env;
  const secrets = options.secrets ?? {};
  const display = (abs: string): string => {
    const rel = relative(options.cwd, abs);
    return rel === '' ? abs : rel;
  };
  const projectDir = dirname(inputs[0]!.path);

  // Variables: shell > .env beside the (first) Compose file > stored secrets.
  const shell: Lookup = (name) => (Object.hasOwn(env, name) ? env[name] : undefined);
  const dotenvPath = join(projectDir, '.env');
  const dotenvText = files.readFile(dotenvPath, 'env', display(dotenvPath));
  const unset = new Set<string>();
  const onUnset = (name: string): void => {
    unset.add(name);
  };
  let dotenv = new Map<string, string>();
  if (dotenvText !== undefined) {
    const parsed = parseDotenv(dotenvText, display(dotenvPath), { lookup: shell, onUnset });
    if (parsed.problems.length > 0) throw new LocatedError(parsed.problems);
    dotenv = parsed.values;
  }
  const localLookup: Lookup = (name) => shell(name) ?? dotenv.get(name);
  const fromSecrets: Lookup = (name) => {
    options.onSecretLookup?.(name);
    return Object.hasOwn(secrets, name) ? secrets[name] : undefined;
  };
  const lookup: Lookup = (name) => localLookup(name) ?? fromSecrets(name);

  const sources = new SourceMap({ file: display(inputs[0]!.path), line: 1, col: 1 });
  const trees: Record<string, unknown>[] = [];
  const problems: Problem[] = [];
  for (const input of inputs) {
    // One file is read quickly, its positions found only if an error needs one; several are
    // merged, and a merge records where each part came from (merge.ts).
    const parsed = parseYaml(input.text, display(input.path), { sources, quick: inputs.length === 1 });
    let tree: unknown = parsed.value;
    if (tree === null) {
      // An empty file is an empty project, as in Docker Compose.
      const empty = {};
      sources.setContainer(empty, { file: parsed.file, line: 1, col: 1 });
      tree = empty;
    }
    if (!isObj(tree)) {
      problems.push({
        pos: { file: parsed.file, line: 1, col: 1 },
        message: `a Compose file must be a map of top-level keys (services, volumes...), not ${show(tree)}`,
      });
      continue;
    }
    const fileProblems = interpolateTree(tree, sources, { lookup, localLookup, pathUsesLocal: isBuildArg, onUnset });
    // Schema problems are only meaningful once values are interpolated; report interpolation first.
    problems.push(...(fileProblems.length > 0 ? fileProblems : validateComposeSchema(tree, sources)));
    trees.push(tree);
  }
  const fileOrder = inputs.map((i) => display(i.path));
  if (problems.length > 0) throw new LocatedError(problems, fileOrder);

  let merged: unknown = trees[0]!;
  for (const next of trees.slice(1)) merged = mergeComposeTrees(merged, next, sources);

  const ctx = new NormalizeState(merged, sources, projectDir, lookup, localLookup, files, display, onUnset);
  const parts = normalizeProject(ctx, merged as Record<string, unknown>);
  if (ctx.problems.length > 0) throw new LocatedError(ctx.problems, fileOrder);

  const warnings = [...[...unset].sort().map((name) => `variable ${name} is not set: using an empty string`), ...ctx.warnings];
  return {
    files: inputs.map((i) => i.path),
    projectDir,
    ...(parts.name !== undefined ? { name: parts.name } : {}),
    services: parts.services,
    volumes: parts.volumes,
    endpoints: parts.endpoints,
    warnings,
  };
}

/** services.*.build.args.* resolve from the local machine only, never from stored secrets (docs/compose.md). */
function isBuildArg(path: Path): boolean {
  return path.length >= 4 && path[0] === 'services' && path[2] === 'build' && path[3] === 'args';
}
