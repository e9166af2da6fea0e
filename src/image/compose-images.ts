/**
 * Images of Compose services that have a `build`: built like the manifest's images (content tags,
 * built when missing from the registry, all with `deploy --build`), and given to the translation as
 * the image of their service. `image` next to `build` names the repository (and tag) to push when
 * it names a registry (`registry.example.com/api`, `localhost:5000/api:dev`); a bare name
 * (`myapp:latest`) is only a local name in Docker Compose, and pushing it to Docker Hub would
 * surprise, so the image then goes, like an image without `image`, to
 * `<context registry>/<environment>-<service>`.
 * Problems (a remote context, a missing Dockerfile) are located in the Compose file.
 */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { formatDuration } from '../base/duration.ts';
import { formatSize } from '../io/input-file.ts';
import { planHostVolumes, type HostVolumePlan, type HostVolumeUse } from '../compose/host-volumes.ts';
import type { ComposeProject } from '../compose/model.ts';
import { LocatedError, type Problem } from '../yaml/errors.ts';
import type { BuildBackend } from './backend.ts';
import { bakeImage, planBake, type BakeMount } from './bake.ts';
import { buildImages, CONTENT_HASH_LABEL, planImages, type BuildProgress } from './build-images.ts';
import type { ImageSpec } from './plan.ts';
import { formatReference, repositoryComponent } from './reference.ts';
import { askedThrough, lookupPushed } from './pushed.ts';
import type { BuildSetup } from './select.ts';

export function composeImageSpecs(project: ComposeProject): ImageSpec[] {
  const problems: Problem[] = [];
  const specs: ImageSpec[] = [];
  const shown = (path: string) => relative(project.projectDir, path) || '.';
  for (const s of project.services) {
    const b = s.build;
    if (!b) continue;
    if (!isAbsolute(b.context)) {
      problems.push({ pos: b.pos, message: `service "${s.name}": remote build contexts (${b.context}) are not supported; clone it and use a local folder` });
      continue;
    }
    const dockerfile = resolve(b.context, b.dockerfile);
    if (!existsSync(b.context) || !statSync(b.context).isDirectory()) {
      problems.push({ pos: b.pos, message: `service "${s.name}": build context ${shown(b.context)} is not a folder` });
      continue;
    }
    if (!existsSync(dockerfile) || !statSync(dockerfile).isFile()) {
      problems.push({ pos: b.pos, message: `service "${s.name}": Dockerfile ${shown(dockerfile)} not found` });
      continue;
    }
    specs.push({
      name: s.name,
      contextDir: b.context,
      dockerfile,
      ...(b.target ? { target: b.target } : {}),
      args: Object.fromEntries(b.args),
      secrets: {},
      noCache: false,
      cacheFrom: b.cacheFrom,
      exportCache: b.exportCache ? [b.exportCache] : [],
      ...(s.image && namesRegistry(s.image) ? { image: s.image } : {}),
      dependsOn: [],
    });
  }
  if (problems.length > 0) throw new LocatedError(problems, project.files);
  return specs;
}

export interface ComposeImages {
  /** Service name -> the image it runs: built, or baked with its host volumes. */
  readonly images: Record<string, string>;
  /** What the translation does with each host volume (translate's `hostVolumes`). */
  readonly hostVolumes: HostVolumePlan;
}

export interface ComposeImagesOptions {
  /** --build: build and bake again even when the content tag is in the registry. */
  readonly force: boolean;
  readonly setup: BuildSetup;
  readonly progress: BuildProgress;
  /** --dry-run: compute the references (content tags), build nothing, ask no registry. */
  readonly dryRun?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * The images of a deploy: services with a `build` are built (as a manifest's images), then services with
 * host volumes to bake get an image of their own, `FROM` their image (the content reference of
 * their build) plus those files (bake.ts), pushed to `<context registry>/<environment>-<service>`
 * under its content tag and built only when that tag is missing (always with --build).
 * Without a registry in the context nothing can be baked: those volumes are not deployed, and the
 * translation's warning names each with the reason.
 */
export async function composeDeployImages(project: ComposeProject, environment: string, opts: ComposeImagesOptions): Promise<ComposeImages> {
  const { setup, progress } = opts;
  const hostVolumes: Record<string, Record<string, HostVolumeUse>> = structuredClone(planHostVolumes(project)) as Record<string, Record<string, HostVolumeUse>>;
  const specs = composeImageSpecs(project);
  const images: Record<string, string> = {};
  // The image each baked service starts from: a build's content reference (a moving `image` tag
  // would leave the baked image's content tag unchanged when the build changes).
  const bases: Record<string, string> = {};
  if (specs.length > 0) {
    if (!opts.dryRun) {
      const outcomes = await buildImages(specs, {
        mode: opts.force ? 'always' : 'missing',
        ...setup,
        repositoryPrefix: `${environment}-`,
        progress,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      for (const o of outcomes) {
        images[o.name] = o.image;
        bases[o.name] = o.contentImage ?? o.image;
      }
    } else if (setup.registry) {
      // The references deploy gives, computed the way buildImages computes them.
      for (const o of await planImages(specs, { ...setup, repositoryPrefix: `${environment}-` })) {
        images[o.name] = o.image;
        bases[o.name] = o.contentImage ?? o.image;
      }
    }
  }

  const registry = setup.registry?.trim().replace(/\/+$/, '');
  let backend: BuildBackend | undefined;
  const openBackend = async (): Promise<BuildBackend> => (backend ??= await setup.backend());
  try {
    for (const s of project.services) {
      const uses = hostVolumes[s.name];
      if (!uses) continue;
      const mounts: BakeMount[] = [];
      for (const v of s.volumes)
        if (v.kind === 'bind' && uses[v.target]?.use === 'bake') mounts.push({ source: v.source, target: v.target, readOnly: v.readOnly });
      if (mounts.length === 0) continue;
      if (!registry) {
        const reason =
          `deploy adds host files to an image pushed to the context's registry, and the context "${setup.contextName}" has none: ` +
          `set one with 'devtool context use ${setup.contextName} --registry HOST'`;
        for (const m of mounts) uses[m.target] = { use: 'skip', reason };
        continue;
      }
      const base = s.build ? bases[s.name] : s.image;
      // A build that was not planned (dry run without registry): the translation says what is missing.
      if (!base) continue;
      const plan = await planBake({ service: s.name, base, mounts });
      const [host, ...path] = registry.split('/');
      const repository = [...path, repositoryComponent(`${environment}-${s.name}`)].join('/');
      const ref = formatReference({ registry: host!, repository, tag: plan.tag });
      images[s.name] = ref;
      if (opts.dryRun) continue;
      if (!opts.force) {
        const image = { registry: host!, repository, tag: plan.tag };
        const found = await lookupPushed(image, await setup.credentials.forRegistry(host!), openBackend, opts.signal);
        if (found.state === 'present') {
          progress.done(`host volumes of ${s.name} are up to date: ${ref} is in the registry${askedThrough(found)}, build skipped`);
          continue;
        }
        if (found.state === 'unknown') progress.warn(`cannot tell whether ${ref} is in the registry (${found.reason}): building it`);
      }
      const builder = await openBackend();
      const files = plan.entries.filter((e) => e.type === 'file');
      const size = formatSize(files.reduce((sum, e) => sum + e.size, 0));
      progress.step(`adding the host volumes of ${s.name} (${files.length} files, ${size}) to ${base} with ${builder.name}: ${ref}`);
      const started = Date.now();
      await bakeImage(plan, [ref], { [CONTENT_HASH_LABEL]: plan.hash }, builder, { line: (text) => progress.output(`volumes ${s.name}`, text) }, opts.signal);
      progress.done(`image of ${s.name} with its host volumes built and pushed in ${formatDuration(Date.now() - started)}: ${ref}`);
    }
  } finally {
    await backend?.close();
  }
  return { images, hostVolumes };
}

/**
 * `deploy --dry-run` without a registry: a service whose built image would go to the context's
 * registry (a `build` and no `image` naming a registry) cannot be rendered; a located error says
 * which, what its reference would be and how to set a registry.
 */
export function requireRegistryForBuilds(
  project: ComposeProject,
  environment: string,
  target: { registry?: string | undefined; contextName?: string | undefined },
): void {
  if (target.registry?.trim()) return;
  const problems: Problem[] = [];
  for (const spec of composeImageSpecs(project)) {
    if (spec.image !== undefined) continue;
    const s = project.services.find((x) => x.name === spec.name)!;
    const where = target.contextName ? `the context "${target.contextName}" has no registry` : 'there is no current context';
    problems.push({
      pos: s.build!.pos,
      path: ['services', s.name, 'build'],
      message:
        `service "${s.name}" has a build and no image naming a registry, and ${where}: ` +
        `its image would be <registry>/${environment}-${s.name}:<content tag>; ` +
        `set one with 'devtool context use <context> --registry HOST', or give the service an image like registry.example.com/${s.name}`,
    });
  }
  if (problems.length > 0) throw new LocatedError(problems, project.files);
}

/** `host.tld/...`, `host:port/...`, `localhost/...`: the first component is a registry. */
function namesRegistry(image: string): boolean {
  const slash = image.indexOf('/');
  return slash > 0 && /[.:]|^localhost$/.test(image.slice(0, slash));
}
