/**
 * The images of a manifest as `deploy` needs them: built and pushed when missing from the registry
 * (every one with --build), then given to the deploy commands as DEVTOOL_BUILD_<NAME>_* variables.
 * Repositories default to `<context registry>/<environment>-<image>`, so two environments deployed
 * from one folder (--name) never push over each other.
 */
import type { Manifest } from '../manifest/model.ts';
import { buildImages, type BuildProgress } from './build-images.ts';
import { manifestImages, selectImages } from './plan.ts';
import type { BuildSetup } from './select.ts';
import { buildVariables } from './variables.ts';

export async function deployImages(
  manifest: Manifest,
  environment: string,
  force: boolean,
  setup: BuildSetup,
  progress: BuildProgress,
): Promise<Record<string, string>> {
  if (Object.keys(manifest.build).length === 0) return {};
  const specs = selectImages(manifestImages(manifest, setup.cwd), []);
  const outcomes = await buildImages(specs, { mode: force ? 'always' : 'missing', ...setup, repositoryPrefix: `${environment}-`, progress });
  return Object.assign({}, ...outcomes.map((o) => buildVariables(o))) as Record<string, string>;
}

/** The references the DEVTOOL_BUILD_<NAME>_IMAGE variables name: images the registry now holds. */
export function builtImageReferences(variables: Readonly<Record<string, string>>): Set<string> {
  return new Set(Object.entries(variables).flatMap(([name, value]) => (/^DEVTOOL_BUILD_.+_IMAGE$/.test(name) ? [value] : [])));
}
