/**
 * What `devtool build` builds: with `-f` naming a Dockerfile, that Dockerfile alone; otherwise the
 * manifest `deploy` would use (devtool.yml, else a Compose file, or the --file given): the images of
 * its build section, or its Compose services that have a `build`; the named ones only (with the
 * images they depend on) when names are given. Compose files see the user's stored secrets as
 * `deploy` does (the lowest-precedence source of `${NAME}`), so a build reads what a deploy would.
 */
import { relative, resolve } from 'node:path';
import { findApp, MANIFEST_FILE } from '../app/folder.ts';
import { DevtoolError, UsageError } from '../base/errors.ts';
import { loadComposeWithSecrets, type StoredSecrets } from '../compose/stored-secrets.ts';
import { environmentName } from '../app/name.ts';
import { loadManifest } from '../manifest/load.ts';
import { composeImageSpecs } from './compose-images.ts';
import { dockerfileImage, isDockerfilePath, manifestImages, selectImages, type ImageSpec } from './plan.ts';

export interface BuildSources {
  readonly specs: ImageSpec[];
  /** Prepended to image names in default repository names: `<environment>-`, or nothing for -f. */
  readonly repositoryPrefix: string;
  readonly warnings: readonly string[];
}

export async function buildSources(
  cwd: string,
  file: string | undefined,
  names: readonly string[],
  env: Readonly<NodeJS.ProcessEnv>,
  storedSecrets?: StoredSecrets,
): Promise<BuildSources> {
  if (file !== undefined && isDockerfilePath(resolve(cwd, file))) {
    if (names.length > 0) throw new UsageError(`image names (${names.join(', ')}) cannot be combined with -f ${file}: a Dockerfile builds one image`);
    return { specs: [dockerfileImage(file, cwd)], repositoryPrefix: '', warnings: [] };
  }
  const source = findApp(cwd, file);
  if (source === undefined) {
    if (file !== undefined) throw new DevtoolError(`${file} not found`);
    throw new DevtoolError(`nothing to build in ${cwd}: no ${MANIFEST_FILE} and no Compose file; name one with --file, or a Dockerfile with -f Dockerfile`);
  }
  const nothing = (what: string) => new DevtoolError(`nothing to build: ${what} (or build a Dockerfile with -f Dockerfile)`);
  if (source.kind === 'compose') {
    const project = await loadComposeWithSecrets({ cwd, files: source.files, env }, storedSecrets);
    const specs = selectImages(composeImageSpecs(project), names);
    if (specs.length === 0) throw nothing(`no service of ${source.files.map((p) => relative(cwd, p)).join(', ')} has a build`);
    return { specs, repositoryPrefix: `${environmentName(undefined, source.folder)}-`, warnings: project.warnings };
  }
  const manifest = loadManifest(source.file, { cwd, env });
  const specs = selectImages(manifestImages(manifest, cwd), names);
  if (specs.length === 0) throw nothing(`the build section of ${relative(cwd, source.file) || source.file} is empty`);
  return { specs, repositoryPrefix: `${environmentName(manifest.name, manifest.folder)}-`, warnings: manifest.warnings };
}
