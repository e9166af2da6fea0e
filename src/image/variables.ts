/**
 * The variables an image of the `build` section gives deploy commands (and images that depend on
 * it, as build arguments), named like Okteto's OKTETO_BUILD_<NAME>_*: for `build.api`,
 * DEVTOOL_BUILD_API_IMAGE (registry/repository:tag), _REGISTRY, _REPOSITORY, _TAG and _SHA (the
 * pushed manifest's digest, sha256:...). docs/manifest.md lists them.
 */
import { buildImageVariable } from '../manifest/model.ts';

export interface ImageOutcome {
  /** Name in the build section (or Compose service, or folder for -f). */
  readonly name: string;
  /** The image reference deploy commands use: registry/repository:tag. */
  readonly image: string;
  readonly registry: string;
  readonly repository: string;
  readonly tag: string;
  /** Digest of the pushed manifest, when the backend or the registry reported it. */
  readonly digest?: string;
  /** Already in the registry: not built. */
  readonly skipped: boolean;
  /** registry/repository:<content tag>: the image itself even when `image` is a moving tag. */
  readonly contentImage?: string;
}

/** DEVTOOL_BUILD_<NAME>_ (the stem of every variable of an image). */
export function buildVariablePrefix(name: string): string {
  return buildImageVariable(name).replace(/IMAGE$/, '');
}

export function buildVariables(o: ImageOutcome, withDigest = true): Record<string, string> {
  const p = buildVariablePrefix(o.name);
  return {
    [`${p}IMAGE`]: o.image,
    [`${p}REGISTRY`]: o.registry,
    [`${p}REPOSITORY`]: o.repository,
    [`${p}TAG`]: o.tag,
    ...(withDigest && o.digest ? { [`${p}SHA`]: o.digest } : {}),
  };
}
