/**
 * `deploy --dry-run`: the objects `deploy` would apply, rendered without a cluster (as `kompose
 * convert` or `docker compose config` do), with the warnings `deploy` prints. Images of services
 * with a `build`, and those host volumes are baked into, are the references `deploy` would build
 * (content tags computed from the files, nothing built). A manifest previews when its deploy section is Compose files only: its commands
 * could do anything, so they cannot be previewed.
 */
import { join } from 'node:path';
import { UsageError } from '../base/errors.ts';
import { composeDeployImages, requireRegistryForBuilds } from '../image/compose-images.ts';
import { planImages, type BuildProgress } from '../image/build-images.ts';
import { manifestImages, selectImages } from '../image/plan.ts';
import type { BuildSetup } from '../image/select.ts';
import { buildVariables } from '../image/variables.ts';
import type { Manifest } from '../manifest/model.ts';
import type { Translation } from '../compose/translate.ts';
import { prepareCompose } from './compose-deploy.ts';
import type { LoadedSource } from './environment-deploy.ts';
import { endpointsFile } from './manifest-deploy.ts';
import { loadComposeWithSecrets, type StoredSecrets } from '../compose/stored-secrets.ts';

export interface DryRunRequest {
  source: LoadedSource;
  environment: string;
  namespace: string;
  endpointDomain?: string;
  /** The IngressClass the endpoints' Ingresses name; absent: the cluster's default class. */
  ingressClass?: string;
  /** The user's environment with the --var values over it. */
  env: Readonly<NodeJS.ProcessEnv>;
  /**
   * The builds' registry and context (`contextName` "" when there is no context); nothing is
   * built and no registry is asked: its backend is never opened.
   */
  setup: BuildSetup;
  /** Where a dry run of the host volumes' images reports (nothing, in practice). */
  progress: BuildProgress;
  /** Stored secrets as a dry run shows them: placeholders, never values (docs/decisions/0090-stored-secret-values-never-printed.md). */
  storedSecrets?: StoredSecrets;
}

export async function renderDryRun(req: DryRunRequest): Promise<Translation> {
  const { source } = req;
  if (source.kind === 'compose') return renderCompose(req, source.folder, source.files, req.env);
  const { manifest } = source;
  const compose = manifest.deploy.compose;
  if (manifest.deploy.commands.length > 0 || !compose) {
    const commands = manifest.deploy.commands.map((c) => c.name).join(', ');
    throw new UsageError(
      `--dry-run previews Compose files only: the deploy commands of ${manifest.file} (${commands || 'none'}) cannot be previewed` +
        (compose ? '' : ', and its deploy section names no Compose file'),
    );
  }
  const images = await manifestImageVariables(manifest, req);
  const extra = compose.endpoints !== undefined ? endpointsFile(compose.endpoints) : undefined;
  try {
    const files = [...compose.files.map((f) => join(manifest.folder, f)), ...(extra ? [extra.file] : [])];
    return await renderCompose(req, manifest.folder, files, { ...req.env, ...images });
  } finally {
    extra?.remove();
  }
}

async function renderCompose(req: DryRunRequest, cwd: string, files: readonly string[], env: Readonly<NodeJS.ProcessEnv>): Promise<Translation> {
  const opts = {
    cwd,
    files,
    environment: req.environment,
    namespace: req.namespace,
    ...(req.endpointDomain ? { endpointDomain: req.endpointDomain } : {}),
    ...(req.ingressClass ? { ingressClass: req.ingressClass } : {}),
    env,
  };
  // Loaded once: the images are planned from the same project that is translated.
  const project = await loadComposeWithSecrets({ cwd, files, env }, req.storedSecrets);
  requireRegistryForBuilds(project, req.environment, { registry: req.setup.registry, contextName: req.setup.contextName });
  const { images, hostVolumes } = await composeDeployImages(project, req.environment, { force: false, setup: req.setup, progress: req.progress, dryRun: true });
  return prepareCompose(opts, project, images, hostVolumes).translation;
}

/** The DEVTOOL_BUILD_<NAME>_* variables the manifest's images would give its Compose files. */
async function manifestImageVariables(manifest: Manifest, req: DryRunRequest): Promise<Record<string, string>> {
  if (Object.keys(manifest.build).length === 0) return {};
  const specs = selectImages(manifestImages(manifest, manifest.folder), []);
  const outcomes = await planImages(specs, { ...req.setup, repositoryPrefix: `${req.environment}-` });
  return Object.assign({}, ...outcomes.map((o) => buildVariables(o, false))) as Record<string, string>;
}
