/**
 * The manifest `init` proposes from an Inspection: pure, so every guess is unit-tested over fixture
 * folders. Build entries carry no `image`: `devtool build` chooses content-derived tags in the
 * context's registry and exports them as DEVTOOL_BUILD_<NAME>_IMAGE (docs/manifest.md).
 */
import { stringify } from 'yaml';
import { toDnsLabel } from '../kube/naming.ts';
import { buildImageVariable } from '../manifest/model.ts';
import type { Inspection, Language } from './inspect.ts';

export interface LanguageDefaults {
  readonly image: string;
  readonly port: number;
}

export const LANGUAGE_DEFAULTS: Record<Language | 'other', LanguageDefaults> = {
  node: { image: 'node:20', port: 3000 },
  go: { image: 'golang:1.22', port: 8080 },
  python: { image: 'python:3.12', port: 8080 },
  java: { image: 'maven:3-eclipse-temurin-21', port: 8080 },
  rust: { image: 'rust:1', port: 8080 },
  ruby: { image: 'ruby:3', port: 3000 },
  php: { image: 'php:8', port: 8080 },
  dotnet: { image: 'mcr.microsoft.com/dotnet/sdk:8.0', port: 8080 },
  other: { image: 'debian:bookworm', port: 8080 },
};

export type DeployMethod = { kind: 'helm'; chart: string } | { kind: 'kubectl'; dirs: string[] } | { kind: 'compose'; file: string } | { kind: 'none' };

export interface Answers {
  readonly deploy: DeployMethod;
  /** The dev container's name (usually the Deployment to replace). */
  readonly service: string;
  readonly port: number;
}

/** Deploy methods found, best guess first: a chart says most, then plain manifests, then Compose. */
export function deployMethods(i: Inspection): DeployMethod[] {
  return [
    ...i.charts.map((chart): DeployMethod => ({ kind: 'helm', chart })),
    ...(i.manifestDirs.length ? [{ kind: 'kubectl', dirs: i.manifestDirs } as DeployMethod] : []),
    ...i.composeFiles.map((file): DeployMethod => ({ kind: 'compose', file })),
    { kind: 'none' },
  ];
}

export function describeMethod(m: DeployMethod): string {
  switch (m.kind) {
    case 'helm':
      return `helm chart ${m.chart}`;
    case 'kubectl':
      return `kubectl apply -f ${m.dirs.join(', ')}`;
    case 'compose':
      return `Compose file ${m.file}`;
    case 'none':
      return 'none for now (add deploy commands later)';
  }
}

export function defaultAnswers(i: Inspection, name: string): Answers {
  const deploy = deployMethods(i)[0]!;
  return { deploy, service: defaultService(i, deploy, name), port: defaultPort(i) };
}

/**
 * The dev container's name, since `up` swaps the Deployment of that name: for Kubernetes manifests, a
 * Deployment they define (the one named like the image, else the first); for a chart, its release
 * (helmRelease); for a Compose file, one of its services (their workloads are named after them: see
 * Inspection.composeServices); otherwise the image's.
 */
export function defaultService(i: Inspection, deploy: DeployMethod, app: string): string {
  if (deploy.kind === 'helm') return helmRelease(i, deploy.chart, app);
  if (deploy.kind === 'compose' && i.composeServices[0] !== undefined) return i.composeServices[0];
  const guess = defaultServiceName(i, app);
  if (deploy.kind === 'kubectl' && i.deployments.length && !i.deployments.includes(guess)) return i.deployments[0]!;
  return guess;
}

/**
 * The release `helm upgrade --install` makes: named after the chart (its Chart.yaml `name`, else the
 * app). Its Deployment then has that name whether the chart names it `{{ .Release.Name }}` or with
 * the `fullname` helper of `helm create` (the release name alone when it contains the chart's name).
 */
export function helmRelease(i: Inspection, chart: string, app: string): string {
  // Helm refuses release names over 53 characters.
  const release = toDnsLabel(i.chartNames[chart] ?? '').slice(0, 53);
  return release.replace(/-+$/, '') || app;
}

/**
 * Whether `up` will find no Deployment or StatefulSet to swap, so that the dev container is created standalone
 * (`autocreate: true`): no deploy method, or Kubernetes manifests that define neither. A chart's
 * and a Compose file's workloads are their own: there, a wrong name stays an error.
 */
export function nothingToSwap(i: Inspection, deploy: DeployMethod): boolean {
  return deploy.kind === 'none' || (deploy.kind === 'kubectl' && i.deployments.length === 0);
}

/**
 * The image a standalone dev container needs written in the manifest: none when the build section
 * builds one for it (`up` runs that) or when it swaps a Deployment (`up` keeps the original's);
 * otherwise the language's image.
 */
export function proposedImage(i: Inspection, answers: Answers, name: string): string | undefined {
  if (!nothingToSwap(i, answers.deploy)) return undefined;
  const built = Object.keys(buildSection(i, name));
  if (built.includes(answers.service) || built.length === 1) return undefined;
  return LANGUAGE_DEFAULTS[i.language ?? 'other'].image;
}

export function appName(i: Inspection): string {
  return toDnsLabel(i.folder.split(/[/\\]/).filter(Boolean).pop() ?? 'app') || 'app';
}

/**
 * The image name of a Dockerfile: `<name>.Dockerfile` names itself; otherwise its folder's name,
 * or the app's for a top-level one (`Dockerfile.dev` is a variant of the same image).
 */
export function imageName(dir: string, app: string, file = 'Dockerfile'): string {
  const own = /^(.+)\.dockerfile$/i.exec(file)?.[1];
  if (own) return toDnsLabel(own) || app;
  return dir === '.' ? app : toDnsLabel(dir.split('/').pop()!) || app;
}

function defaultServiceName(i: Inspection, app: string): string {
  const first = i.dockerfiles[0];
  return first ? imageName(first.dir, app, first.path.split('/').pop()) : app;
}

export function defaultPort(i: Inspection): number {
  return i.dockerfiles.find((d) => d.exposed.length)?.exposed[0] ?? LANGUAGE_DEFAULTS[i.language ?? 'other'].port;
}

function buildSection(i: Inspection, name: string): Record<string, unknown> {
  const build: Record<string, unknown> = {};
  for (const d of i.dockerfiles) {
    const file = d.path.split('/').pop()!;
    const image = imageName(d.dir, name, file);
    if (build[image]) continue;
    build[image] = { context: d.dir, ...(file !== 'Dockerfile' ? { dockerfile: file } : {}) };
  }
  return build;
}

/**
 * The manifest as a plain object, sections in the documented order. The dev container's image is
 * left to `up` wherever something exists to run (the original's image, or the one the build section
 * builds): never a public image the cluster may not reach. `image` replaces the language's image
 * where one must be written (run.ts passes a copy the context's registry holds).
 */
export function proposeManifest(i: Inspection, answers: Answers, name = appName(i), image?: string): Record<string, unknown> {
  const build = buildSection(i, name);
  const manifest: Record<string, unknown> = { name };
  if (Object.keys(build).length) manifest['build'] = build;
  const deploy = deploySection(i, answers.deploy, name);
  if (deploy) manifest['deploy'] = deploy;
  const devImage = proposedImage(i, answers, name);
  manifest['services'] = {
    [answers.service]: {
      ...(devImage ? { image: image ?? devImage } : {}),
      command: 'bash',
      workdir: '/app',
      sync: ['.:/app'],
      forward: [`${answers.port}:${answers.port}`],
      ...(nothingToSwap(i, answers.deploy) ? { autocreate: true } : {}),
    },
  };
  return manifest;
}

function deploySection(i: Inspection, m: DeployMethod, name: string): unknown {
  switch (m.kind) {
    case 'helm':
      // Chart values differ per chart, so built images are not passed: the user adds
      // `--set <key>=$DEVTOOL_BUILD_<NAME>_IMAGE` where the chart takes them.
      return [`helm upgrade --install ${helmRelease(i, m.chart, name)} ${m.chart}`];
    case 'kubectl':
      return kubectlCommands(i, m.dirs, name);
    case 'compose':
      return { compose: m.file };
    case 'none':
      return undefined;
  }
}

/**
 * The images of the build section that Kubernetes manifests name: by the manifests' image reference,
 * the build entry whose name is its last path component (`localhost:5000/web:dev` is
 * `build.web`). The build pushes under its own content tag, never that reference, so the deploy
 * commands put the built one in its place.
 */
export function builtImageReferences(i: Inspection, name: string): Map<string, string> {
  const built = new Set(Object.keys(buildSection(i, name)));
  const found = new Map<string, string>();
  for (const images of Object.values(i.manifestImages)) {
    for (const ref of images) {
      const repository = ref.split('@')[0]!.replace(/:[^:/]*$/, '');
      const last = repository.split('/').pop()!;
      if (built.has(last)) found.set(ref, last);
    }
  }
  return found;
}

/**
 * `kubectl apply -f DIR` for each folder of manifests; a file naming an image the build section
 * builds is applied on its own, through sed, with `$DEVTOOL_BUILD_<NAME>_IMAGE` (the pushed content
 * tag) in place of that reference: the manifests deploy what was just built, and every change of the
 * image's sources rolls the workload out.
 */
function kubectlCommands(i: Inspection, dirs: readonly string[], name: string): unknown[] {
  const built = builtImageReferences(i, name);
  const commands: unknown[] = [];
  for (const dir of dirs) {
    const files = i.manifestFiles.filter((f) => (f.includes('/') ? f.slice(0, f.lastIndexOf('/')) : '.') === dir);
    const substituted = files.filter((f) => (i.manifestImages[f] ?? []).some((ref) => built.has(ref)));
    if (substituted.length === 0) {
      commands.push(`kubectl apply -f ${dir}`);
      continue;
    }
    for (const file of substituted) {
      const edits = (i.manifestImages[file] ?? [])
        .filter((ref) => built.has(ref))
        .map((ref) => `-e "s|${ref.replace(/\./g, '\\.')}|$${buildImageVariable(built.get(ref)!)}|g"`);
      commands.push(`sed ${edits.join(' ')} ${file} | kubectl apply -f -`);
    }
    const rest = files.filter((f) => !substituted.includes(f));
    if (rest.length) commands.push(`kubectl apply ${rest.map((f) => `-f ${f}`).join(' ')}`);
  }
  return commands;
}

export function renderManifest(manifest: Record<string, unknown>, note: string): string {
  const header = ["# devtool manifest: every field is described in devtool's docs/manifest.md and schema/devtool-manifest.schema.json", `# ${note}`];
  return `${header.join('\n')}\n${stringify(manifest, { lineWidth: 0 })}`;
}
