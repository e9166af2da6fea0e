/**
 * What `init` finds in a folder: Dockerfiles (a shallow walk: projects keep them at the top or one
 * or two folders down), Compose files, Kubernetes manifests (YAML holding apiVersion and kind),
 * Helm charts (Chart.yaml), the language from marker files, and ports from EXPOSE lines.
 * Read-only and bounded, so a huge repository never makes init slow.
 */
import { readdirSync, readFileSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { parseAllDocuments, parseDocument } from 'yaml';
import { defaultComposeFileNames } from '../compose/find.ts';
import { parseYaml } from '../yaml/parse.ts';

export type Language = 'node' | 'go' | 'python' | 'java' | 'rust' | 'ruby' | 'php' | 'dotnet';

/**
 * A language's package manager or build tool, as its marker files at the top say: what decides
 * which folders hold downloaded packages or build output (`.stignore`, propose.ts). Java is two
 * (Maven builds into target/, Gradle into build/).
 */
export type Ecosystem = 'npm' | 'python' | 'go' | 'maven' | 'gradle' | 'cargo' | 'bundler' | 'composer' | 'dotnet';

export interface Dockerfile {
  /** Relative to the inspected folder, with "/" separators. */
  readonly path: string;
  /** Folder holding it, relative ("." for the top). */
  readonly dir: string;
  readonly exposed: number[];
}

export interface Inspection {
  readonly folder: string;
  readonly dockerfiles: Dockerfile[];
  readonly composeFiles: string[];
  /**
   * Services of the first Compose file, the likeliest dev container first: those that mount a
   * host folder (what `up` synchronizes), then those with a build, then the rest, each in file order.
   */
  readonly composeServices: string[];
  /** Folders (relative) holding Kubernetes manifests, shallowest first. */
  readonly manifestDirs: string[];
  /** Folders (relative) holding a Chart.yaml. */
  readonly charts: string[];
  /** The `name` of each chart's Chart.yaml, by folder (none when it has no plain string name). */
  readonly chartNames: Readonly<Record<string, string>>;
  /** Names of the Deployments and StatefulSets (what `up` swaps) those manifests define, shallowest folder first, then in file order. */
  readonly deployments: string[];
  /** The files (relative) of those folders that hold Kubernetes manifests, shallowest first. */
  readonly manifestFiles: string[];
  /** The container images those files name, by file, in file order (what a built image may replace: propose.ts). */
  readonly manifestImages: Readonly<Record<string, readonly string[]>>;
  /** The language of the dev container's image and port: the first marker found at the top. */
  readonly language?: Language;
  /** Every ecosystem whose marker is at the top, in the order of ECOSYSTEM_MARKERS (a project may mix several). */
  readonly ecosystems: Ecosystem[];
}

const MAX_DEPTH = 3;
const MAX_ENTRIES = 5000;
const SKIPPED = new Set(['node_modules', '.git', 'vendor', 'target', 'dist', 'build', '.venv', 'venv', '__pycache__', '.idea', '.vscode', 'bin', 'obj']);

/** Marker files of each language, most specific first; the first found at the top wins. */
const MARKERS: readonly [string, Language][] = [
  ['package.json', 'node'],
  ['go.mod', 'go'],
  ['requirements.txt', 'python'],
  ['pyproject.toml', 'python'],
  ['Pipfile', 'python'],
  ['setup.py', 'python'],
  ['pom.xml', 'java'],
  ['build.gradle', 'java'],
  ['build.gradle.kts', 'java'],
  ['Cargo.toml', 'rust'],
  ['Gemfile', 'ruby'],
  ['composer.json', 'php'],
];

/** Marker files at the top of a project, by ecosystem; a name ending in "*" is a suffix (`*.csproj`). */
const ECOSYSTEM_MARKERS: readonly [Ecosystem, readonly string[]][] = [
  ['npm', ['package.json']],
  ['python', ['requirements.txt', 'pyproject.toml', 'Pipfile', 'setup.py']],
  ['go', ['go.mod']],
  ['maven', ['pom.xml']],
  ['gradle', ['build.gradle', 'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts']],
  ['cargo', ['Cargo.toml']],
  ['bundler', ['Gemfile']],
  ['composer', ['composer.json']],
  ['dotnet', ['global.json', '*.csproj', '*.fsproj', '*.sln']],
];

/** The ecosystems of the names found at a project's top, in ECOSYSTEM_MARKERS order. */
export function ecosystemsOf(names: Iterable<string>): Ecosystem[] {
  const top = [...names];
  const has = (marker: string) => (marker.startsWith('*') ? top.some((n) => n.endsWith(marker.slice(1))) : top.includes(marker));
  return ECOSYSTEM_MARKERS.filter(([, markers]) => markers.some(has)).map(([e]) => e);
}

export function inspectFolder(folder: string): Inspection {
  const files: string[] = [];
  walk(folder, 0, files);
  const rel = (p: string) => relative(folder, p).split(sep).join('/') || '.';
  const dockerfiles = files
    .filter((p) => isDockerfileName(basename(p)))
    .map((p) => ({ path: rel(p), dir: rel(dirname(p)), exposed: exposedPorts(read(p)) }))
    .sort(byDepth((d) => d.path));
  const composeFiles = files.filter((p) => dirname(p) === folder && (defaultComposeFileNames as readonly string[]).includes(basename(p))).map(rel);
  const charts = files
    .filter((p) => basename(p) === 'Chart.yaml')
    .map((p) => rel(dirname(p)))
    .sort(byDepth((d) => d));
  const chartNames = Object.fromEntries(charts.flatMap((c) => chartName(read(join(folder, c, 'Chart.yaml'))).map((n) => [c, n])));
  const inChart = (p: string) => charts.some((c) => c === '.' || rel(p).startsWith(`${c}/`));
  const manifestDirs = [
    ...new Set(
      files.filter((p) => /\.ya?ml$/i.test(p) && !inChart(p) && !composeFiles.includes(rel(p)) && isKubernetesManifest(read(p))).map((p) => rel(dirname(p))),
    ),
  ].sort(byDepth((d) => d));
  const manifestPaths = files
    .filter((p) => manifestDirs.includes(rel(dirname(p))) && /\.ya?ml$/i.test(p) && !composeFiles.includes(rel(p)))
    .sort(byDepth((p) => rel(p)));
  const deployments = [...new Set(manifestPaths.flatMap((p) => deploymentNames(read(p))))];
  const manifestFiles = manifestPaths.filter((p) => isKubernetesManifest(read(p))).map(rel);
  const manifestImages = Object.fromEntries(manifestFiles.map((p) => [p, containerImages(read(join(folder, p)))]));
  const top = new Set(readdirSafe(folder));
  const language =
    MARKERS.find(([marker]) => top.has(marker))?.[1] ?? (top.has('global.json') || [...top].some((n) => n.endsWith('.csproj')) ? 'dotnet' : undefined);
  const composeServices = composeFiles[0] ? composeServiceNames(read(join(folder, composeFiles[0]))) : [];
  const ecosystems = ecosystemsOf(top);
  return {
    folder,
    dockerfiles,
    composeFiles,
    composeServices,
    manifestDirs,
    charts,
    chartNames,
    deployments,
    manifestFiles,
    manifestImages,
    ...(language ? { language } : {}),
    ecosystems,
  };
}

/** The service names of a Compose file, best dev container first (see Inspection); none when it does not parse. */
export function composeServiceNames(text: string): string[] {
  let services: unknown;
  try {
    services = (parseYaml(text, 'compose.yaml').value as { services?: unknown } | null)?.services;
  } catch {
    return [];
  }
  if (!services || typeof services !== 'object' || Array.isArray(services)) return [];
  const rank = (s: unknown): number => {
    const def = (s ?? {}) as { volumes?: unknown; build?: unknown };
    const volumes = Array.isArray(def.volumes) ? def.volumes : [];
    const mountsHost = volumes.some((v) => (typeof v === 'string' ? /^[.~/]/.test(v) && v.includes(':') : (v as { type?: unknown } | null)?.type === 'bind'));
    return mountsHost ? 0 : def.build !== undefined ? 1 : 2;
  };
  return Object.entries(services as Record<string, unknown>)
    .map(([name, def], index) => ({ name, rank: rank(def), index }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map((s) => s.name);
}

export function isDockerfileName(name: string): boolean {
  return name === 'Dockerfile' || name.startsWith('Dockerfile.') || name.endsWith('.Dockerfile') || name.endsWith('.dockerfile');
}

/** A YAML document with top-level apiVersion and kind (any document of a multi-document file). */
export function isKubernetesManifest(text: string): boolean {
  return /^apiVersion:\s*\S/m.test(text) && /^kind:\s*\S/m.test(text);
}

/** The names of the Deployments and StatefulSets of a (multi-document) manifest file; a file that does not parse has none. */
export function deploymentNames(text: string): string[] {
  const names: string[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) continue;
    const d = doc.toJS() as { kind?: unknown; metadata?: { name?: unknown } } | null;
    if (d && typeof d === 'object' && (d.kind === 'Deployment' || d.kind === 'StatefulSet') && typeof d.metadata?.name === 'string')
      names.push(d.metadata.name);
  }
  return names;
}

/**
 * The images of the containers (init containers too) of every pod a (multi-document) manifest file
 * defines: a Pod's, a workload's pod template's, a CronJob's job template's. Without duplicates, in
 * file order; a file that does not parse has none.
 */
export function containerImages(text: string): string[] {
  const images = new Set<string>();
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) continue;
    const d = doc.toJS() as { kind?: unknown; spec?: PodHolder } | null;
    if (!d || typeof d !== 'object') continue;
    const pod = d.kind === 'Pod' ? d.spec : d.kind === 'CronJob' ? d.spec?.jobTemplate?.spec?.template?.spec : d.spec?.template?.spec;
    for (const c of [...asList(pod?.initContainers), ...asList(pod?.containers)]) {
      const image = (c as { image?: unknown } | null)?.image;
      if (typeof image === 'string' && image.trim()) images.add(image.trim());
    }
  }
  return [...images];
}

interface PodHolder {
  initContainers?: unknown;
  containers?: unknown;
  template?: { spec?: PodHolder };
  jobTemplate?: { spec?: { template?: { spec?: PodHolder } } };
}

function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The name a Chart.yaml gives its chart, as a one-element list; none when it does not parse or has no name. */
export function chartName(text: string): string[] {
  const doc = parseDocument(text);
  if (doc.errors.length) return [];
  const name = (doc.toJS() as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name.trim() ? [name.trim()] : [];
}

/** Ports of EXPOSE lines (`EXPOSE 8080 9229/tcp`); variables and ranges are skipped. */
export function exposedPorts(dockerfile: string): number[] {
  const ports: number[] = [];
  for (const m of dockerfile.matchAll(/^\s*EXPOSE\s+(.+)$/gim)) {
    for (const word of m[1]!.trim().split(/\s+/)) {
      const p = /^(\d{1,5})(\/(tcp|udp))?$/i.exec(word);
      if (p && Number(p[1]) >= 1 && Number(p[1]) <= 65535) ports.push(Number(p[1]));
    }
  }
  return [...new Set(ports)];
}

function walk(dir: string, depth: number, out: string[]): void {
  if (depth > MAX_DEPTH || out.length >= MAX_ENTRIES) return;
  for (const name of readdirSafe(dir)) {
    if (SKIPPED.has(name) || (name.startsWith('.') && name !== '.devcontainer')) continue;
    const path = join(dir, name);
    let st: Stats;
    try {
      st = statSync(path);
    } catch {
      continue;
    }
    if (st.isDirectory()) walk(path, depth + 1, out);
    else if (st.isFile() && st.size < 1_000_000) out.push(path);
    if (out.length >= MAX_ENTRIES) return;
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Shallowest first, then by name: the top-level Dockerfile or k8s folder is the likely one. */
function byDepth<T>(key: (t: T) => string): (a: T, b: T) => number {
  const depth = (s: string) => (s === '.' ? 0 : s.split('/').length);
  return (a, b) => depth(key(a)) - depth(key(b)) || key(a).localeCompare(key(b));
}
