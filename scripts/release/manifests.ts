/**
 * The package.json files of a release's npm packages, and its SHA256SUMS: pure, so that a release
 * is the same bytes for one commit.
 *
 * The CLI package `devtool` has no `dependencies` (its bundles carry them) and names one package
 * per platform in `optionalDependencies`, at its own version; each platform package says with npm's
 * `os` and `cpu` fields which machine it is for, so that npm installs the one that fits (the pattern
 * of esbuild and Biome). The CLI finds it at run time (src/binaries/host-binary.ts). The CLI package
 * also names, as `devtool.agentImage`, the release's devtool-bin image, which the CLI runs in dev
 * pods when no other is set (src/dev/target.ts, `releaseAgentImage`).
 */
import { executableName } from '../../src/base/platform.ts';
import { HOST_BUNDLE, platformPackageName, RELEASE_PLATFORMS } from '../../src/binaries/host-binary.ts';

/** A machine a release has a platform package for: Node's names and Go's. */
export interface ReleasePlatform {
  /** `process.platform`, npm's `os`. */
  readonly os: NodeJS.Platform;
  /** `process.arch`, npm's `cpu`. */
  readonly cpu: string;
  readonly goos: string;
  readonly goarch: string;
}

const GOOS: Record<string, string> = { linux: 'linux', darwin: 'darwin', win32: 'windows' };
const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };
const LABEL: Record<string, string> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };

export const PLATFORMS: readonly ReleasePlatform[] = RELEASE_PLATFORMS.map((key) => {
  const [os, cpu] = key.split('-') as [NodeJS.Platform, string];
  return { os, cpu, goos: GOOS[os]!, goarch: GOARCH[cpu]! };
});

/** The fields of the checkout's package.json a release reads. */
export interface SourceManifest {
  readonly name: string;
  readonly version: string;
  readonly description?: string;
  readonly license?: string;
  readonly bin: Record<string, string>;
  readonly engines?: Record<string, string>;
}

/** The npm package name of `platform`'s host programs. */
export function platformPackage(platform: ReleasePlatform): string {
  return platformPackageName({ platform: platform.os, arch: platform.cpu });
}

/** The files of `platform`'s package, under its `bin/`: the host bundle, the three programs in one binary (agent/host). */
export function platformFiles(platform: ReleasePlatform): string[] {
  return [`bin/${executableName(HOST_BUNDLE, platform.os)}`];
}

/** The release's images the CLI package names. */
export interface ReleaseImages {
  /** The devtool-bin image, `<registry>/devtool-bin:<version>@sha256:...` (image-ref.ts). */
  readonly agentImage: string;
}

/** The released CLI's package.json. */
export function cliManifest(source: SourceManifest, images: ReleaseImages): Record<string, unknown> {
  return {
    name: source.name,
    version: source.version,
    ...(source.description ? { description: source.description } : {}),
    ...(source.license ? { license: source.license } : {}),
    bin: source.bin,
    engines: { node: source.engines?.['node'] ?? '>=20' },
    optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [platformPackage(p), source.version])),
    devtool: { agentImage: images.agentImage },
  };
}

/** The package.json of `platform`'s package. */
export function platformManifest(source: SourceManifest, platform: ReleasePlatform): Record<string, unknown> {
  return {
    name: platformPackage(platform),
    version: source.version,
    description: `The programs devtool runs on ${LABEL[platform.os] ?? platform.os} ${platform.cpu}: Syncthing, devtool-agent, devtool-buildkit, in one binary`,
    ...(source.license ? { license: source.license } : {}),
    os: [platform.os],
    cpu: [platform.cpu],
    // Yarn: keep the binaries as files on disk, never inside a zip archive.
    preferUnplugged: true,
  };
}

/** SHA256SUMS as `sha256sum --check` reads it: one `<hash>  <path>` line per file, in path order. */
export function sha256Sums(files: readonly { path: string; sha256: string }[]): string {
  return [...files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((f) => `${f.sha256}  ${f.path}\n`)
    .join('');
}
