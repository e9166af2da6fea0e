/**
 * Building the images of a plan, in order: each image's content tag is computed (content-hash.ts);
 * in "missing" mode (`deploy`) an image whose content tag is already in the registry is not built;
 * otherwise (`build`, `deploy --build`) it is built and pushed by the backend. Images that depend
 * on others receive their DEVTOOL_BUILD_<DEP>_* variables as build arguments, which also puts the
 * dependency's tag into their own content hash: a changed base rebuilds its dependents.
 *
 * Image references: the image's `image` field when given (pushed under its own tag too, when it
 * has one), else `<context registry>/<prefix><name>`; the content tag is always pushed.
 */
import { formatDuration } from '../base/duration.ts';
import { DevtoolError } from '../base/errors.ts';
import type { BuildBackend } from './backend.ts';
import { contentHash, contentTag } from './content-hash.ts';
import { scanBuildContext } from './build-context.ts';
import type { DockerCredentials } from './docker-config.ts';
import type { ImageSpec } from './plan.ts';
import { formatReference, parseReference, repositoryComponent } from './reference.ts';
import { askedThrough, lookupPushed } from './pushed.ts';
import { buildVariables, type ImageOutcome } from './variables.ts';

/** Image label holding the full content hash (the tag carries its first 24 digits). */
export const CONTENT_HASH_LABEL = 'dev.devtool.content-hash';

/** What a build reports, line by line (deploy/progress.ts's Progress is one: build does not depend on it). */
export interface BuildProgress {
  step(message: string): void;
  done(message: string): void;
  warn(message: string): void;
  /** A line of the builder's own output. */
  output(name: string, line: string): void;
}

export interface BuildImagesOptions {
  /** `always`: build every image (build, deploy --build); `missing`: only those not in the registry. */
  readonly mode: 'always' | 'missing';
  /** The context's registry, for images without `image`. */
  readonly registry?: string;
  /** The context's name, for the message when it has no registry. */
  readonly contextName: string;
  /** Prepended to image names to make repository names (`<environment>-` for manifests). */
  readonly repositoryPrefix: string;
  /** Opened on the first build only: a deploy with nothing to build never contacts the daemon. */
  readonly backend: () => Promise<BuildBackend>;
  readonly credentials: DockerCredentials;
  readonly progress: BuildProgress;
  readonly signal?: AbortSignal;
}

interface Target {
  readonly registry: string;
  readonly repository: string;
  /** The tag of the `image` field, when it names one. */
  readonly userTag?: string;
}

export async function buildImages(specs: readonly ImageSpec[], opts: BuildImagesOptions): Promise<ImageOutcome[]> {
  // Every reference is checked before anything is built.
  const targets = new Map(specs.map((s) => [s.name, targetOf(s, opts)]));
  const outcomes = new Map<string, ImageOutcome>();
  let backend: BuildBackend | undefined;
  const openBackend = async (): Promise<BuildBackend> => (backend ??= await opts.backend());
  try {
    for (const spec of specs) {
      const target = targets.get(spec.name)!;
      const depArgs = Object.assign({}, ...spec.dependsOn.map((d) => (outcomes.has(d) ? buildVariables(outcomes.get(d)!, false) : {}))) as Record<
        string,
        string
      >;
      const args = { ...depArgs, ...spec.args };
      const { hash, tag, contentRef, image } = await contentReference(spec, args, target);
      const outcome = {
        name: spec.name,
        image,
        registry: target.registry,
        repository: target.repository,
        tag: target.userTag ?? tag,
        contentImage: contentRef,
      };

      if (opts.mode === 'missing') {
        const image = { registry: target.registry, repository: target.repository, tag };
        const found = await lookupPushed(image, await opts.credentials.forRegistry(target.registry), openBackend, opts.signal);
        if (found.state === 'present') {
          opts.progress.done(`image ${spec.name} is up to date: ${contentRef} is in the registry${askedThrough(found)}, build skipped`);
          outcomes.set(spec.name, { ...outcome, ...(found.digest ? { digest: found.digest } : {}), skipped: true });
          continue;
        }
        if (found.state === 'unknown') opts.progress.warn(`cannot tell whether ${contentRef} is in the registry (${found.reason}): building it`);
      }

      const builder = await openBackend();
      opts.progress.step(`building image ${spec.name} with ${builder.name}: ${contentRef}`);
      const started = Date.now();
      const tags = target.userTag && target.userTag !== tag ? [contentRef, image] : [contentRef];
      const result = await builder.build(
        {
          contextDir: spec.contextDir,
          dockerfile: spec.dockerfile,
          ...(spec.target ? { target: spec.target } : {}),
          args,
          secrets: spec.secrets,
          noCache: spec.noCache,
          cacheFrom: spec.cacheFrom,
          exportCache: spec.exportCache,
          tags,
          labels: { [CONTENT_HASH_LABEL]: hash },
        },
        { line: (text) => opts.progress.output(`build ${spec.name}`, text) },
        opts.signal,
      );
      opts.progress.done(`image ${spec.name} built and pushed in ${formatDuration(Date.now() - started)}: ${tags.join(', ')}`);
      outcomes.set(spec.name, { ...outcome, ...(result.digest ? { digest: result.digest } : {}), skipped: false });
    }
  } finally {
    await backend?.close();
  }
  return specs.map((s) => outcomes.get(s.name)!);
}

/** The content hash and the references of an image, from its files (nothing is built or asked). */
async function contentReference(spec: ImageSpec, args: Readonly<Record<string, string>>, target: Target) {
  const scanned = await scanBuildContext(spec.contextDir, spec.dockerfile, { hash: true });
  const hash = contentHash({
    dockerfile: scanned.dockerfile.text,
    entries: scanned.entries,
    args,
    ...(spec.target ? { target: spec.target } : {}),
    secretIds: Object.keys(spec.secrets),
  });
  const tag = contentTag(hash);
  const contentRef = formatReference({ registry: target.registry, repository: target.repository, tag });
  const image = target.userTag ? formatReference({ registry: target.registry, repository: target.repository, tag: target.userTag }) : contentRef;
  return { hash, tag, contentRef, image };
}

/**
 * The outcomes `buildImages` would give (references with content tags, dependencies' variables
 * included), computed without building, pushing or asking the registry: what `deploy --dry-run`
 * gives a manifest's Compose files as DEVTOOL_BUILD_* variables.
 */
export async function planImages(
  specs: readonly ImageSpec[],
  opts: Pick<BuildImagesOptions, 'registry' | 'contextName' | 'repositoryPrefix'>,
): Promise<ImageOutcome[]> {
  const targets = new Map(specs.map((s) => [s.name, targetOf(s, opts)]));
  const outcomes = new Map<string, ImageOutcome>();
  for (const spec of specs) {
    const target = targets.get(spec.name)!;
    const depArgs = Object.assign({}, ...spec.dependsOn.map((d) => (outcomes.has(d) ? buildVariables(outcomes.get(d)!, false) : {}))) as Record<string, string>;
    const { tag, contentRef, image } = await contentReference(spec, { ...depArgs, ...spec.args }, target);
    const outcome = { name: spec.name, image, registry: target.registry, repository: target.repository, tag: target.userTag ?? tag, contentImage: contentRef };
    outcomes.set(spec.name, { ...outcome, skipped: true });
  }
  return specs.map((s) => outcomes.get(s.name)!);
}

function targetOf(spec: ImageSpec, opts: Pick<BuildImagesOptions, 'registry' | 'contextName' | 'repositoryPrefix'>): Target {
  if (spec.image !== undefined) {
    const ref = parseReference(spec.image, `build.${spec.name}.image`);
    if (ref.digest) throw new DevtoolError(`build.${spec.name}.image: ${spec.image} names a digest; a built image is pushed under a tag`);
    return { registry: ref.registry, repository: ref.repository, ...(ref.tag ? { userTag: ref.tag } : {}) };
  }
  const registry = opts.registry?.trim().replace(/\/+$/, '');
  if (!registry) {
    if (!opts.contextName) {
      throw new DevtoolError(
        `image ${spec.name} has no image reference, and no registry is known (there is no current context): select a context with a registry ` +
          `('devtool context use <context> --registry HOST'), or give the image an image reference`,
      );
    }
    throw new DevtoolError(
      `image ${spec.name} has no image reference, and the context "${opts.contextName}" has no registry to push it to: set one with 'devtool ` +
        `context use ${opts.contextName} --registry HOST', or give the image an image reference`,
    );
  }
  // A registry setting may carry a path (`ghcr.io/team`): it prefixes the repository.
  const [host, ...path] = registry.split('/');
  return { registry: host!, repository: [...path, repositoryComponent(`${opts.repositoryPrefix}${spec.name}`)].join('/') };
}
