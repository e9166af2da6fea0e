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
import type { ComposeProject } from '../compose/model.ts';
import { LocatedError, type Problem } from '../yaml/errors.ts';
import { buildImages, planImages, type BuildProgress } from './build-images.ts';
import type { ImageSpec } from './plan.ts';
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

/** Service name -> image reference, for the translation's `images` option. */
export async function composeImages(
  project: ComposeProject,
  environment: string,
  force: boolean,
  setup: BuildSetup,
  progress: BuildProgress,
): Promise<Record<string, string>> {
  const specs = composeImageSpecs(project);
  if (specs.length === 0) return {};
  const outcomes = await buildImages(specs, { mode: force ? 'always' : 'missing', ...setup, repositoryPrefix: `${environment}-`, progress });
  return Object.fromEntries(outcomes.map((o) => [o.name, o.image]));
}

/**
 * Service name -> the image reference `deploy` would build and run (composeImages), computed without
 * building (content tags from the contexts): what `deploy --dry-run` renders. `registry`: the
 * context's; without one, a service whose image must go there is a located error.
 */
export async function plannedComposeImages(
  project: ComposeProject,
  environment: string,
  target: { registry?: string | undefined; contextName?: string | undefined },
): Promise<Record<string, string>> {
  const specs = composeImageSpecs(project);
  if (specs.length === 0) return {};
  const registry = target.registry?.trim();
  if (!registry) {
    const problems: Problem[] = [];
    for (const spec of specs) {
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
  const outcomes = await planImages(specs, {
    ...(registry ? { registry } : {}),
    contextName: target.contextName ?? '',
    repositoryPrefix: `${environment}-`,
  });
  return Object.fromEntries(outcomes.map((o) => [o.name, o.image]));
}

/** `host.tld/...`, `host:port/...`, `localhost/...`: the first component is a registry. */
function namesRegistry(image: string): boolean {
  const slash = image.indexOf('/');
  return slash > 0 && /[.:]|^localhost$/.test(image.slice(0, slash));
}
