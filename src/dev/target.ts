/**
 * Which dev container a command acts on: the manifest's `services` entry (by the devName argument,
 * or the only one), the cluster and namespace, the folder identity and the local state of it.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DevtoolError, UsageError } from '../cli/errors.ts';
import type { Invocation } from '../cli/invocation.ts';
import type { ResolvedContext } from '../context/store.ts';
import type { Factory } from '../factory.ts';
import { clusterTarget } from '../kube/target.ts';
import { loadManifest } from '../manifest/load.ts';
import type { DevService, Manifest } from '../manifest/model.ts';
import { DevState } from './local-state.ts';
import { devKey, folderHash } from './names.ts';

export interface DevTarget {
  manifest: Manifest;
  devName: string;
  dev: DevService;
  context: ResolvedContext;
  namespace: string;
  /** folderHash of the manifest's folder: recorded on the cluster objects. */
  folder: string;
  state: DevState;
}

const EXAMPLE = 'e.g. "services: {api: {sync: [\'.:/app\']}}" where api is the Deployment to develop';

export async function devTarget(f: Factory, inv: Invocation): Promise<DevTarget> {
  const { file, manifest, names } = devManifest(f, inv);
  const wanted = inv.args[0];
  let devName: string;
  if (wanted !== undefined) {
    if (!Object.hasOwn(manifest.services, wanted)) throw new UsageError(`${file} has no services entry "${wanted}" (it has ${names.join(', ')}); add services.${wanted} or pick one of those`);
    devName = wanted;
  } else if (names.length === 1) {
    devName = names[0]!;
  } else {
    throw new UsageError(`${file} defines several dev containers (${names.join(', ')}): name one, e.g. 'devtool ${inv.commandName} ${names[0]}'`);
  }
  return devTargetFor(f, inv, manifest, devName);
}

/** Every dev container of the manifest (for commands that act on all of them by default). */
export async function allDevTargets(f: Factory, inv: Invocation): Promise<DevTarget[]> {
  const { manifest, names } = devManifest(f, inv);
  return Promise.all(names.map((name) => devTargetFor(f, inv, manifest, name)));
}

function devManifest(f: Factory, inv: Invocation): { file: string; manifest: Manifest; names: string[] } {
  const file = inv.string('file') ?? 'devtool.yml';
  if (!existsSync(resolve(f.cwd, file))) {
    throw new DevtoolError(`no manifest ${file} in ${f.cwd}: create one with a services entry for your dev container, ${EXAMPLE}`);
  }
  const manifest = loadManifest(file, { cwd: f.cwd, env: f.env });
  for (const w of manifest.warnings) f.log.warn(w);
  const names = Object.keys(manifest.services);
  if (names.length === 0) throw new DevtoolError(`${file} has no services section: add one for your dev container, ${EXAMPLE}`);
  return { file, manifest, names };
}

async function devTargetFor(f: Factory, inv: Invocation, manifest: Manifest, devName: string): Promise<DevTarget> {
  const { context, namespace } = await clusterTarget(f, inv.string('namespace'));
  const key = devKey(manifest.folder, context.name, namespace, devName);
  return {
    manifest,
    devName,
    dev: manifest.services[devName]!,
    context,
    namespace,
    folder: folderHash(manifest.folder),
    state: new DevState(f.home.devDir(key)),
  };
}

/** The devtool-bin image the init container copies the agent from (agent/README.md). */
export function agentImage(f: Factory, context: ResolvedContext): string {
  const explicit = f.env.DEVTOOL_BIN_IMAGE?.trim();
  if (explicit) return explicit;
  if (context.registry) return `${context.registry.replace(/\/+$/, '')}/devtool-bin:${f.version}`;
  throw new DevtoolError(`no registry for the devtool-bin image: set one with 'devtool context use ${context.name} --registry HOST' (where agent/build.sh pushed it), or set DEVTOOL_BIN_IMAGE`);
}
