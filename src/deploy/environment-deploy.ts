/**
 * One environment deployed from one folder: its manifest (dependencies first, then the manifest's
 * images, commands and Compose files: manifest-deploy.ts) or its Compose files (compose-deploy.ts).
 * `devtool deploy` and every dependency go through here, so a dependency is deployed exactly as
 * `devtool deploy` in its repository would deploy it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findApp, MANIFEST_FILE, missingFile, type AppSource } from '../app/folder.ts';
import type { BuildSetup } from '../image/select.ts';
import { DevtoolError } from '../base/errors.ts';
import { defaultComposeFileNames } from '../compose/find.ts';
import type { KubeClient } from '../kube/client.ts';
import { loadManifest } from '../manifest/load.ts';
import type { Manifest } from '../manifest/model.ts';
import { deployCompose } from './compose-deploy.ts';
import { deployDependencies, type DependencyRun, type DeployFolder } from './dependencies.ts';
import { deployManifest } from './manifest-deploy.ts';
import type { Progress } from './progress.ts';
import type { StoredSecrets } from '../compose/stored-secrets.ts';

/** What is deployed, loaded and checked (bad input fails here, before the cluster is touched). */
export type LoadedSource = { kind: 'manifest'; manifest: Manifest } | { kind: 'compose'; files: string[]; folder: string };

/**
 * `file`: --file (or a dependency's `manifest`), relative to `folder`: a manifest, or Compose files
 * merged in order (app/folder.ts tells them apart by content); else devtool.yml, else a Compose file.
 */
export function loadSource(folder: string, file: string | readonly string[] | undefined, env: Readonly<NodeJS.ProcessEnv>): LoadedSource {
  const source = deploySource(folder, file);
  if (source.kind === 'compose') return source;
  return { kind: 'manifest', manifest: loadManifest(source.file, { cwd: folder, env }) };
}

/** What `deploy` deploys (app/folder.ts decides), or why there is nothing. */
function deploySource(folder: string, file: string | readonly string[] | undefined): AppSource {
  const named = file === undefined || file.length === 0 ? undefined : file;
  const app = findApp(folder, named);
  if (app) return app;
  if (named !== undefined) throw new DevtoolError(`${missingFile(folder, named) ?? String(named)} not found`);
  throw new DevtoolError(
    `nothing to deploy in ${folder}: no ${MANIFEST_FILE} and no Compose file (${defaultComposeFileNames.join(', ')}); name one with --file`,
  );
}

/**
 * What `destroy` reads: the manifest (its destroy commands, its name) and the folder naming the
 * environment. With `file` (--file) it is found and loaded as deploy finds and loads it; a Compose
 * file has no destroy commands (manifest undefined); a file that does not exist is an error, before
 * anything is destroyed. Without: devtool.yml of `folder` when there is one.
 */
export function loadDestroySource(folder: string, file: string | undefined, env: Readonly<NodeJS.ProcessEnv>): { manifest?: Manifest; folder: string } {
  if (file === undefined) {
    const manifestPath = join(folder, MANIFEST_FILE);
    return existsSync(manifestPath) ? { manifest: loadManifest(manifestPath, { cwd: folder, env }), folder } : { folder };
  }
  const source = loadSource(folder, file, env);
  return source.kind === 'manifest' ? { manifest: source.manifest, folder: source.manifest.folder } : { folder: source.folder };
}

/** Where and with what an environment is deployed: the same for an application and its dependencies. */
export interface DeployTarget {
  client: KubeClient;
  namespace: string;
  contextName: string;
  endpointDomain?: string;
  /** The IngressClass the endpoints' Ingresses name; absent: the cluster's default class. */
  ingressClass?: string;
  /** The user's environment. */
  env: Readonly<NodeJS.ProcessEnv>;
  /** The cache of dependency clones. */
  dependenciesDir: string;
  /** How images of `build` sections are built (image/select.ts). */
  builds: BuildSetup;
  progress: Progress;
  now: () => Date;
  /** The user's stored secrets (a service context with a token): `${NAME}` in Compose files, below shell and `.env`. */
  storedSecrets?: StoredSecrets;
  /** Aborted when the deploy is interrupted (Ctrl-C, SIGTERM): it stops where it is and records so. */
  signal?: AbortSignal;
}

export interface EnvironmentRequest {
  source: LoadedSource;
  environment: string;
  /** --var values (a dependency's `variables`). */
  variables: Record<string, string>;
  timeoutMs: number;
  wait: boolean;
  /** --build */
  build: boolean;
  /** --dependencies */
  forceDependencies: boolean;
}

/** Deploys; returns the public endpoint URLs (of a Compose file). */
export async function deployEnvironment(target: DeployTarget, req: EnvironmentRequest, outer?: DependencyRun): Promise<{ endpoints: string[] }> {
  const { source } = req;
  if (source.kind === 'compose') {
    const translation = await deployCompose(
      target.client,
      {
        cwd: source.folder,
        files: source.files,
        environment: req.environment,
        namespace: target.namespace,
        ...(target.endpointDomain ? { endpointDomain: target.endpointDomain } : {}),
        ...(target.ingressClass ? { ingressClass: target.ingressClass } : {}),
        // Variables are variables of the Compose file too, above the shell's.
        env: { ...target.env, ...req.variables },
        ...(target.storedSecrets ? { storedSecrets: target.storedSecrets } : {}),
        timeoutMs: req.timeoutMs,
        wait: req.wait,
        variables: req.variables,
        builds: { setup: target.builds, force: req.build },
        ...(target.signal ? { signal: target.signal } : {}),
      },
      target.progress,
      target.now,
    );
    return { endpoints: translation.endpoints.map((e) => e.url) };
  }
  const { manifest } = source;
  const run: DependencyRun = {
    path: [...(outer?.path ?? []), req.environment],
    deployed: outer?.deployed ?? new Set(),
    force: outer?.force ?? req.forceDependencies,
  };
  const hasDependencies = Object.keys(manifest.dependencies).length > 0;
  await deployManifest(
    target.client,
    {
      manifest,
      environment: req.environment,
      namespace: target.namespace,
      contextName: target.contextName,
      ...(target.endpointDomain ? { endpointDomain: target.endpointDomain } : {}),
      ...(target.ingressClass ? { ingressClass: target.ingressClass } : {}),
      env: target.env,
      ...(target.storedSecrets ? { storedSecrets: target.storedSecrets } : {}),
      variables: req.variables,
      timeoutMs: req.timeoutMs,
      wait: req.wait,
      build: req.build,
      builds: target.builds,
      ...(target.signal ? { signal: target.signal } : {}),
      ...(hasDependencies
        ? {
            deployDependencies: () =>
              deployDependencies(
                { client: target.client, progress: target.progress, cacheRoot: target.dependenciesDir, env: target.env },
                manifest,
                run,
                dependencyDeployer(target),
              ),
          }
        : {}),
    },
    target.progress,
    target.now,
  );
  return { endpoints: [] };
}

/** How a cloned dependency is deployed: loaded and deployed like a folder given to `devtool deploy`. */
function dependencyDeployer(target: DeployTarget): DeployFolder {
  return async (folder, opts, run) => {
    // Its variables are its --var: above the shell's environment when its manifest is loaded.
    const source = loadSource(folder, opts.file, { ...target.env, ...opts.variables });
    await deployEnvironment(
      { ...target, progress: opts.progress },
      {
        source,
        environment: opts.environment,
        variables: opts.variables,
        timeoutMs: opts.timeoutMs,
        wait: opts.wait,
        build: false,
        forceDependencies: run.force,
      },
      run,
    );
  };
}
