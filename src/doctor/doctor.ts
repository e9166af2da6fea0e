/**
 * `doctor`: one zip with what a maintainer needs to see what went wrong with a dev container,
 * and no secret of the user's. Contents:
 *
 *   metadata.json            host OS and architecture, devtool and node versions, where the host
 *                            programs are (Syncthing, the agent's helpers, the BuildKit client),
 *                            context and namespace, state of each dev container, what could not be
 *                            collected
 *   manifest-summary.yml     the manifest's `services` section as devtool resolved it (of a Compose
 *                            application: the dev containers devtool derives from its Compose file)
 *   devtool.log[.1, .2]      the CLI's own log and its rotated files
 *   local/<dev>/*.log*       logs of local helpers of a dev container (e.g. the local Syncthing)
 *   remote/<dev>/*.log*      the agent's logs in the dev container (Syncthing, SSH, supervisor)
 *   remote/<dev>/container[.previous].log, pod.json   the container's output, pod state, events
 *
 * Everything that can be collected is, whatever else fails: no manifest, no context, an
 * unreachable cluster or no active dev container each become a line of metadata.json (and of the
 * command's output) instead of an error. Every file goes through the Redactor (log/redact.ts).
 * The zip goes to the devtool home's doctor folder, never the current one (see DevtoolHome.doctorDir).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { arch, platform, release, type as osType } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { findApp, MANIFEST_FILE, type AppSource } from '../app/folder.ts';
import { hostBinaryReport } from '../binaries/host-binary.ts';
import { UsageError } from '../base/errors.ts';
import type { ContextStore, ResolvedContext } from '../context/store.ts';
import type { DevtoolHome } from '../home.ts';
import type { KubeClient } from '../kube/client.ts';
import type { KubeTarget } from '../kube/target.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import { loadManifest } from '../manifest/load.ts';
import type { Manifest } from '../manifest/model.ts';
import { devKey, folderHash } from '../dev/names.ts';
import { composeDevContainers } from '../dev/target.ts';
import { isSecretName, redactEnvironment, Redactor, secretValuesIn } from '../log/redact.ts';
import type { CollectedFile, RemoteCollection } from './remote.ts';

export interface DoctorOptions {
  /** --file as given; undefined: devtool.yml, else the folder's Compose file (as `up` finds it). */
  file: string | undefined;
  /** The devName argument: only that dev container; default every one of the manifest, or of the Compose application. */
  devName?: string;
  /** --namespace */
  namespace?: string;
  /** Progress lines for the user. */
  step(message: string): void;
}

/** What doctor reads and reaches (the command's factory passes itself; a test, its own). */
export interface DoctorEnv {
  readonly cwd: string;
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly home: Pick<DevtoolHome, 'contextsFile' | 'devDir' | 'logFile' | 'doctorDir'>;
  readonly version: string;
  readonly contexts: Pick<ContextStore, 'requireCurrent'>;
  now(): Date;
  kube(target: KubeTarget): Promise<KubeClient>;
}

export interface DoctorResult {
  path: string;
  entries: string[];
  /** What could not be collected, one line each. */
  notes: string[];
}

export async function writeDoctorFile(f: DoctorEnv, o: DoctorOptions): Promise<DoctorResult> {
  const notes: string[] = [];
  const secrets: string[] = [];
  const files: CollectedFile[] = [];

  const file = o.file ?? MANIFEST_FILE;
  const app = await readApp(f, o.file, notes);
  const folder = app?.folder ?? dirname(resolve(f.cwd, file));
  const names = app ? Object.keys(app.services) : [];
  if (o.devName !== undefined && app && !names.includes(o.devName)) {
    const entry = app.compose ? 'dev container' : 'services entry';
    throw new UsageError(`${app.display} has no ${entry} "${o.devName}" (it has ${names.join(', ') || 'none'}); name one of those, or none for all`);
  }
  const devNames = o.devName !== undefined ? [o.devName] : names;
  if (app && names.length === 0) {
    const why = app.compose ? `${app.display}: no service mounts a host folder` : `${file} has no services section`;
    notes.push(`${why}: no dev container to look at`);
  }
  for (const dev of Object.values(app?.services ?? {}))
    secrets.push(
      ...Object.entries(dev.environment)
        .filter(([k]) => isSecretName(k))
        .map(([, v]) => v),
    );
  secrets.push(
    ...Object.entries(f.env)
      .filter(([k, v]) => v && isSecretName(k))
      .map(([, v]) => v!),
  );
  secrets.push(...secretsOfFile(f.home.contextsFile));

  let context: ResolvedContext | undefined;
  try {
    context = await f.contexts.requireCurrent();
  } catch (err) {
    notes.push(`no context: ${(err as Error).message}`);
  }
  const namespace = o.namespace ?? context?.namespace;

  const hostPrograms = hostBinaryReport(f.env);
  notes.push(...hostPrograms.problems);

  const devState: Record<string, unknown> = Object.fromEntries(devNames.map((n) => [n, { state: 'unknown' }]));
  if (context && namespace) {
    for (const devName of devNames) {
      const stateDir = f.home.devDir(devKey(folder, context.name, namespace, devName));
      for (const file of listFiles(stateDir)) {
        if (file.endsWith('.json')) secrets.push(...secretsOfFile(join(stateDir, file)));
        else if (/\.log(\.\d+)?$/.test(file)) files.push({ path: `local/${devName}/${file}`, text: readText(join(stateDir, file)) });
      }
    }
    const remote = devNames.length > 0 ? await collectCluster(f, context, namespace, devNames, folderHash(folder), o.step, notes, secrets) : {};
    for (const [devName, r] of Object.entries(remote)) {
      files.push(...r.files);
      devState[devName] = { state: r.state, ...(r.pod ? { pod: r.pod } : {}) };
    }
  }

  const redactor = new Redactor(secrets);
  const entries: [string, string][] = [];
  entries.push([
    'metadata.json',
    `${JSON.stringify(metadata(f, context, namespace, app?.display ?? file, devState, hostPrograms.programs, notes), null, 2)}\n`,
  ]);
  if (app) entries.push(['manifest-summary.yml', await manifestSummary(app, f.cwd)]);
  for (const file of logFiles(f.home.logFile)) entries.push([basename(file), readText(file)]);
  for (const file of files) entries.push([file.path, file.text]);

  const { zipSync, strToU8 } = await import('fflate');
  const mtime = f.now();
  const zip = zipSync(Object.fromEntries(entries.map(([name, text]) => [name, [strToU8(redactor.text(text)), { level: 6, mtime }]])));
  const path = join(f.home.doctorDir, `devtool-doctor-${stamp(mtime)}.zip`);
  // Logs stay private even redacted: only the user may read the file (and the folder is 0700).
  writeFileAtomic(path, zip, 0o600);
  return { path, entries: entries.map(([name]) => name), notes };
}

/** The application's dev containers, from its manifest or, without one, from its Compose file. */
interface DoctorApp {
  /** The file(s) as messages name them. */
  display: string;
  /** Absolute. */
  file: string;
  folder: string;
  name?: string;
  services: Manifest['services'];
  /** The dev containers are derived from a Compose file. */
  compose: boolean;
}

async function readApp(f: DoctorEnv, explicit: string | undefined, notes: string[]): Promise<DoctorApp | undefined> {
  const file = explicit ?? MANIFEST_FILE;
  let app: AppSource | undefined;
  try {
    app = findApp(f.cwd, explicit);
  } catch (err) {
    notes.push(`${file} cannot be loaded: ${(err as Error).message}`);
    return undefined;
  }
  if (!app) {
    notes.push(`no manifest ${file} in ${f.cwd}: no manifest summary`);
    return undefined;
  }
  if (app.kind === 'manifest') {
    try {
      const m = loadManifest(app.file, { cwd: f.cwd, env: f.env });
      return { display: file, file: m.file, folder: m.folder, ...(m.name ? { name: m.name } : {}), services: m.services, compose: false };
    } catch (err) {
      notes.push(`manifest ${file} cannot be loaded: ${(err as Error).message}`);
      return undefined;
    }
  }
  const display = app.files.map((x) => basename(x)).join(', ');
  try {
    const derived = await composeDevContainers(app.folder, app.files, f.env);
    return { display, file: app.files[0]!, folder: app.folder, services: derived.services, compose: true };
  } catch (err) {
    notes.push(`${display} cannot be loaded: ${(err as Error).message}`);
    return undefined;
  }
}

async function collectCluster(
  f: DoctorEnv,
  context: ResolvedContext,
  namespace: string,
  devNames: string[],
  folder: string,
  step: (m: string) => void,
  notes: string[],
  secrets: string[],
): Promise<Record<string, RemoteCollection>> {
  const out: Record<string, RemoteCollection> = {};
  let client: KubeClient;
  try {
    client = await f.kube({ context, namespace });
    secrets.push(...secretValuesIn({ user: client.kc.getCurrentUser() }));
  } catch (err) {
    notes.push(`no remote logs: ${(err as Error).message}`);
    return out;
  }
  const { collectRemote } = await import('./remote.ts');
  for (const devName of devNames) {
    step(`collecting the logs of dev container ${devName}`);
    try {
      const r = await collectRemote(client, devName, folder);
      notes.push(...r.notes);
      secrets.push(...r.secrets);
      out[devName] = r;
    } catch (err) {
      const { describeKubeFailure } = await import('../kube/config.ts');
      notes.push(`${devName}: no remote logs from the cluster of context ${context.name}: ${describeKubeFailure(err)}`);
    }
  }
  return out;
}

function metadata(
  f: DoctorEnv,
  context: ResolvedContext | undefined,
  namespace: string | undefined,
  file: string,
  devContainers: Record<string, unknown>,
  hostPrograms: Record<string, string>,
  notes: string[],
): Record<string, unknown> {
  return {
    createdAt: f.now().toISOString(),
    devtool: { version: f.version },
    node: process.version,
    os: { platform: platform(), type: osType(), release: release(), arch: arch() },
    hostPrograms,
    context: context?.name ?? null,
    namespace: namespace ?? null,
    manifest: file,
    devContainers,
    notCollected: notes,
  };
}

/** The `services` section as devtool resolved it (or derived it from Compose), with secret-named environment values hidden. */
async function manifestSummary(app: DoctorApp, cwd: string): Promise<string> {
  const { stringify } = await import('yaml');
  const services = Object.fromEntries(Object.entries(app.services).map(([name, dev]) => [name, { ...dev, environment: redactEnvironment(dev.environment) }]));
  const path = app.file.startsWith(`${cwd}/`) ? app.file.slice(cwd.length + 1) : app.file;
  const what = app.compose ? 'dev containers as devtool derives them from it' : 'services section as devtool resolved it';
  return `# ${path}, ${what} (defaults filled in, secrets redacted)\n${stringify({ ...(app.name ? { name: app.name } : {}), services })}`;
}

/** devtool.log and its rotated files, oldest last. */
function logFiles(log: string): string[] {
  const dir = dirname(log);
  const name = basename(log);
  return listFiles(dir)
    .filter((f) => f === name || new RegExp(`^${name.replace(/\./g, '\\.')}\\.\\d+$`).test(f))
    .sort((a, b) => (a === name ? -1 : b === name ? 1 : Number(a.slice(name.length + 1)) - Number(b.slice(name.length + 1))))
    .map((f) => join(dir, f));
}

function listFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => statSync(join(dir, f)).isFile());
  } catch {
    return [];
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    return `(cannot read ${path}: ${(err as Error).message})\n`;
  }
}

function secretsOfFile(path: string): string[] {
  try {
    return secretValuesIn(JSON.parse(readFileSync(path, 'utf8')));
  } catch {
    return [];
  }
}

/** 2025-06-14T10:15:02.123Z -> 20250614-101502 (UTC, sorts by time). */
function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/[-:]/g, '')
    .replace('T', '-');
}
