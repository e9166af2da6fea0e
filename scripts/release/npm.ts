/**
 * The npm part of a release: the CLI package, built with every dependency bundled in
 * (scripts/build.mjs release), and one package per platform with the host bundle (the three host
 * programs in one binary) cross-compiled for it (agent/build.sh host-path), each packed by `npm pack` into
 * `<release>/npm/`. npm pack gives every entry the same mtime and order, and the Go builds are
 * reproducible (-trimpath, fixed stamps), so one commit gives the same tarballs. The CLI package
 * names the release's devtool-bin image (`agentImage`, by digest: main.ts builds it first).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  cliManifest,
  PLATFORMS,
  platformFiles,
  platformManifest,
  platformPackage,
  type ReleaseImages,
  type ReleasePlatform,
  type SourceManifest,
} from './manifests.ts';

/** Runs a program of the checkout, its output to this process's stderr; returns its stdout's lines. */
function run(root: string, program: string, args: readonly string[]): string[] {
  const stdout = execFileSync(program, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 << 20 });
  return stdout.trim().split('\n').filter(Boolean);
}

/** Packs the package in `dir` into `into`; returns the tarball's file name. */
function pack(root: string, dir: string, into: string): string {
  const [report] = JSON.parse(run(root, 'npm', ['pack', dir, '--json', '--ignore-scripts', '--offline', '--pack-destination', into]).join('\n')) as {
    filename: string;
  }[];
  return report!.filename;
}

function writeManifest(dir: string, manifest: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The files of `platform`'s package, in platformFiles' order (built, or taken from the build cache). */
function hostPrograms(root: string, platform: ReleasePlatform): string[] {
  return run(root, 'bash', ['agent/build.sh', 'host-path', platform.goos, platform.goarch]).slice(-1);
}

/** Writes `<release>/npm/devtool-<version>.tgz` and a `devtool-<platform>-<arch>-<version>.tgz` per platform; returns their paths. */
export function buildNpmPackages(root: string, release: string, images: ReleaseImages): string[] {
  const source = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as SourceManifest;
  const stage = join(release, '.stage');
  const out = join(release, 'npm');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const tarballs: string[] = [];

  const cli = join(stage, source.name);
  process.stderr.write(`release: ${source.name} ${source.version}, its dependencies bundled in\n`);
  run(root, process.execPath, ['scripts/build.mjs', 'release', join(cli, 'dist')]);
  writeManifest(cli, cliManifest(source, images));
  copyFileSync(join(root, 'README.md'), join(cli, 'README.md'));
  tarballs.push(join(out, pack(root, cli, out)));

  for (const platform of PLATFORMS) {
    const name = platformPackage(platform);
    process.stderr.write(`release: ${name} ${source.version}, host programs for ${platform.goos}/${platform.goarch}\n`);
    const dir = join(stage, name);
    writeManifest(dir, platformManifest(source, platform));
    const files = platformFiles(platform);
    hostPrograms(root, platform).forEach((from, i) => {
      const to = join(dir, files[i]!);
      mkdirSync(join(dir, 'bin'), { recursive: true });
      copyFileSync(from, to);
      chmodSync(to, 0o755);
    });
    tarballs.push(join(out, pack(root, dir, out)));
  }
  rmSync(stage, { recursive: true, force: true });
  return tarballs;
}
