/**
 * Which dev container a command acts on: the manifest's `services` entry (by the devName argument,
 * or the only one), the cluster and namespace, the folder identity and the local state of it.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { findApp, MANIFEST_FILE } from '../app/folder.ts';
import { packageRoot } from '../binaries/host-binary.ts';
import { DevtoolError, UsageError } from '../base/errors.ts';
import type { ContextStore, ResolvedContext } from '../context/store.ts';
import type { LoadedSource } from '../deploy/environment-deploy.ts';
import { environmentName } from '../app/name.ts';
import { clusterTarget } from '../kube/target.ts';
import { loadManifest } from '../manifest/load.ts';
import type { DevService, Manifest } from '../manifest/model.ts';
import { projectScope } from '../manifest/project-scope.ts';
import type { DevtoolHome } from '../home.ts';
import type { Logger } from '../log/logger.ts';
import { chooseAgentImage, type AgentImageChoice } from './agent-delivery.ts';
import { composeDevServices, type ComposeDevServices } from './compose-services.ts';
import { DevState } from './local-state.ts';
import { devKey, folderHash } from './names.ts';
import { formatOrigin } from './origin.ts';

export interface DevTarget {
  manifest: Manifest;
  devName: string;
  dev: DevService;
  context: ResolvedContext;
  namespace: string;
  /** folderHash of the manifest's folder: recorded on the cluster objects. */
  folder: string;
  /** The same folder in words (host:path, origin.ts): recorded next to the hash. */
  origin: string;
  state: DevState;
  /** The Compose service's host paths that are not synced, each with why (what `up` says). */
  skipped: string[];
  /** What `up` deploys when the application is not deployed yet (or with --deploy), and as which environment. */
  deploy: { source: LoadedSource; environment: string };
}

/** What the command line says about the dev container to act on (commands/shared.ts: devTargetQuery). */
export interface DevTargetQuery {
  /** The devName argument; without it, the manifest's only dev container. */
  devName: string | undefined;
  /** --file as the user typed it; undefined: devtool.yml, or a Compose file when there is none. */
  file: string | undefined;
  /** --namespace; undefined: the context's. */
  namespace: string | undefined;
  /** The command, for messages ('devtool up api'). */
  commandName: string;
  /** --context; undefined: the current context. */
  context: string | undefined;
}

/** What finding a dev container needs from outside (the command's factory passes itself). */
export interface DevTargetEnv {
  readonly cwd: string;
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly home: Pick<DevtoolHome, 'devDir'>;
  readonly log: Pick<Logger, 'warn'>;
  readonly contexts: Pick<ContextStore, 'select'>;
}

const EXAMPLE = 'e.g. "services: {api: {sync: [\'.:/app\']}}" where api is the Deployment to develop';

export async function devTarget(f: DevTargetEnv, q: DevTargetQuery): Promise<DevTarget> {
  const { file, manifest, names, source, fromCompose, skipped } = await devManifest(f, q.file);
  const wanted = q.devName;
  let devName: string;
  if (wanted !== undefined) {
    if (!Object.hasOwn(manifest.services, wanted)) {
      throw new UsageError(
        fromCompose
          ? `${file} has no dev container "${wanted}": the services that mount a host folder are ${names.join(', ')} (a service becomes one by ` +
              `mounting a folder, e.g. volumes: ['./src:/app/src'])`
          : `${file} has no services entry "${wanted}" (it has ${names.join(', ')}); add services.${wanted} or pick one of those`,
      );
    }
    devName = wanted;
  } else if (names.length === 1) {
    devName = names[0]!;
  } else {
    throw new UsageError(`${file} defines several dev containers (${names.join(', ')}): name one, e.g. 'devtool ${q.commandName} ${names[0]}'`);
  }
  return devTargetFor(f, q, manifest, devName, source, skipped);
}

/** Every dev container of the manifest (for commands that act on all of them by default). */
export async function allDevTargets(f: DevTargetEnv, q: DevTargetQuery): Promise<DevTarget[]> {
  const { manifest, names, source, skipped } = await devManifest(f, q.file);
  return Promise.all(names.map((name) => devTargetFor(f, q, manifest, name, source, skipped)));
}

interface DevManifest {
  file: string;
  manifest: Manifest;
  names: string[];
  source: LoadedSource;
  /** The dev containers are the Compose services that mount a host folder (no `services` section). */
  fromCompose: boolean;
  /** By dev container: its Compose host paths that are not synced, and why. */
  skipped: Record<string, string[]>;
}

/**
 * The manifest (devtool.yml, or --file), or a Compose application: a Compose file named by --file,
 * or found when there is no devtool.yml. Where no `services` section says which dev containers
 * there are, the Compose services with host-path volumes are (compose-services.ts).
 */
async function devManifest(f: DevTargetEnv, explicit: string | undefined): Promise<DevManifest> {
  const file = explicit ?? MANIFEST_FILE;
  const app = findApp(f.cwd, explicit);
  if (app === undefined) {
    throw new DevtoolError(
      `no manifest ${file} in ${f.cwd}: create one with a services entry for your dev container, ${EXAMPLE} (or run up next to a Compose file ` +
        `whose service mounts a host folder)`,
    );
  }
  let manifest: Manifest;
  let source: LoadedSource;
  if (app.kind === 'compose') {
    manifest = composeAsManifest(app.files[0]!);
    source = app;
  } else {
    manifest = loadManifest(file, { cwd: f.cwd, env: f.env });
    source = { kind: 'manifest', manifest };
  }
  // A Compose application is named by its files below (it has no services section of its own).
  let display = file;
  const compose = manifest.deploy.compose;
  const fromCompose = Object.keys(manifest.services).length === 0 && compose !== undefined;
  let skipped: Record<string, string[]> = {};
  if (fromCompose) {
    const derived = await composeDevContainers(manifest.folder, compose.files, f.env);
    for (const note of derived.notes) f.log.warn(note);
    manifest = { ...manifest, services: derived.services };
    skipped = derived.skipped;
    display = compose.files.map((x) => basename(x)).join(', ');
    if (Object.keys(derived.services).length === 0) {
      // The notes (warnings above) say why each host path is left out; the error says what to do.
      const what = derived.notes.length
        ? 'no service mounts a folder of the project that up can synchronize (the warnings above say why)'
        : 'no service mounts a host folder, so there is nothing for up to synchronize';
      throw new DevtoolError(`${display}: ${what}: mount one (e.g. volumes: ['./src:/app/src']), or write a devtool.yml with a services entry, ${EXAMPLE}`);
    }
  }
  for (const w of manifest.warnings) f.log.warn(w);
  const names = Object.keys(manifest.services);
  if (names.length === 0) throw new DevtoolError(`${file} has no services section: add one for your dev container, ${EXAMPLE}`);
  return { file: display, manifest, names, source, fromCompose, skipped };
}

/** The dev containers of a Compose application with no `services` section: its services that mount a folder of it. */
export async function composeDevContainers(folder: string, files: readonly string[], env: Readonly<NodeJS.ProcessEnv>): Promise<ComposeDevServices> {
  // The Compose loader (schema, ajv) is loaded only for Compose applications.
  const { loadCompose } = await import('../compose/load.ts');
  const project = loadCompose({ cwd: folder, files, env });
  return composeDevServices(project, { isDirectory, scope: projectScope(folder) });
}

/** A Compose application seen as a manifest that deploys its Compose file and has no section of its own. */
function composeAsManifest(path: string): Manifest {
  return {
    file: path,
    folder: dirname(path),
    text: '',
    build: {},
    deploy: { commands: [], compose: { files: [path] } },
    dependencies: {},
    destroy: [],
    services: {},
    warnings: [],
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function devTargetFor(
  f: DevTargetEnv,
  q: DevTargetQuery,
  manifest: Manifest,
  devName: string,
  source: LoadedSource,
  skipped: Record<string, string[]>,
): Promise<DevTarget> {
  const { context, namespace } = await clusterTarget(f, q);
  return {
    manifest,
    devName,
    dev: manifest.services[devName]!,
    context,
    namespace,
    folder: folderHash(manifest.folder),
    origin: formatOrigin(manifest.folder),
    state: devState(f, manifest.folder, context.name, namespace, devName),
    skipped: skipped[devName] ?? [],
    // Named as `devtool deploy` in this folder names it.
    deploy: { source, environment: environmentName(source.kind === 'manifest' ? source.manifest.name : undefined, manifest.folder) },
  };
}

/** The local state of the dev container `devName` of `folder` (local-state.ts), existing or not. */
export function devState(f: { readonly home: Pick<DevtoolHome, 'devDir'> }, folder: string, context: string, namespace: string, devName: string): DevState {
  return new DevState(f.home.devDir(devKey(folder, context, namespace, devName)));
}

/**
 * The devtool-bin image the init container copies the agent from (agent/README.md), if one is
 * known; undefined: the agent is copied in through the Kubernetes API (agent-inject.ts).
 */
export function agentImage(f: { readonly env: Readonly<NodeJS.ProcessEnv>; readonly version: string }, context: ResolvedContext): AgentImageChoice | undefined {
  return chooseAgentImage({ named: f.env.DEVTOOL_BIN_IMAGE, registry: context.registry, version: f.version, release: releaseAgentImage() });
}

/**
 * The devtool-bin image a released package names (`devtool.agentImage` in its package.json, by
 * digest); a source checkout names none.
 */
export function releaseAgentImage(root = packageRoot()): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devtool?: { agentImage?: unknown } };
    const image = pkg.devtool?.agentImage;
    return typeof image === 'string' && image ? image : undefined;
  } catch {
    return undefined;
  }
}
