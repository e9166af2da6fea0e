/**
 * Go programs the CLI runs on the user's machine: Syncthing (the local end of file sync), the
 * agent's local helpers and devtool-buildkit (the BuildKit client). Where each comes from, first
 * match wins:
 *  1. `DEVTOOL_<NAME>_BIN` (DEVTOOL_SYNCTHING_BIN, DEVTOOL_AGENT_BIN, DEVTOOL_BUILDKIT_BIN): a path, for tests and
 *     unusual installs;
 *  2. the platform package of a release, `devtool-<platform>-<arch>` (npm's `os` and `cpu` fields
 *     choose it; docs/releasing.md), resolved from the CLI's package: nested in its node_modules,
 *     or its sibling in a global install. Its `bin/devtool-host` (`.exe` on Windows) is the three
 *     programs in one binary (agent/host), run with the program's name as its first argument;
 *  3. in a source checkout, the project's own build script, which builds on demand and caches
 *     outside the clone (agent/build.sh, buildkit/build.sh); it prints the binary's path.
 * Anything else is one line naming the package to install, or the variable to set.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DevtoolError } from '../base/errors.ts';
import { executableName, hostPlatform } from '../base/platform.ts';
import { VERSION } from '../version.ts';

export interface HostBinary {
  /** The program's name: its file in a source checkout (without `.exe`), the bundle's first argument, and the NAME of DEVTOOL_<NAME>_BIN upper-cased. */
  readonly name: string;
  /** When the variable is not DEVTOOL_<NAME>_BIN. */
  readonly variable?: string;
  /** In a source checkout: the script (relative to the package root) and its arguments that print the path. */
  readonly buildScript: readonly string[];
}

export const SYNCTHING: HostBinary = { name: 'syncthing', buildScript: ['agent/build.sh', 'syncthing-path'] };
/** For its `keygen` and `syncthing-config` subcommands: the local sync end is configured like the remote one. */
export const AGENT: HostBinary = { name: 'devtool-agent', variable: 'DEVTOOL_AGENT_BIN', buildScript: ['agent/build.sh', 'agent-path'] };
/** The BuildKit client `devtool build` runs when the builder is a BuildKit daemon (src/image/buildkit.ts). */
export const BUILDKIT: HostBinary = { name: 'devtool-buildkit', variable: 'DEVTOOL_BUILDKIT_BIN', buildScript: ['buildkit/build.sh', 'client-path'] };

/** Every host program, in the order doctor lists them. */
export const HOST_BINARIES: readonly HostBinary[] = [SYNCTHING, AGENT, BUILDKIT];

/** The machines a release has a platform package for, as Node names them (`process.platform`-`process.arch`). */
export const RELEASE_PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'] as const;

/** The machine the CLI runs on, as Node names it. */
export interface Machine {
  readonly platform: NodeJS.Platform;
  readonly arch: string;
}

/** What the lookup reads of the file system; the real one is `installedProbe`. */
export interface Probe {
  exists(path: string): boolean;
  /** The folder and version of package `name` as the CLI's package resolves it; undefined: not installed. */
  installedPackage(name: string): { dir: string; version: string } | undefined;
}

/**
 * The file a release's platform package carries: Syncthing, devtool-agent and devtool-buildkit in one
 * binary, which runs the program its first argument names (docs/decisions/0207-one-host-binary.md).
 */
export const HOST_BUNDLE = 'devtool-host';

/** How to run a host program: `file`, with `args` before the program's own (the bundle's program name; none for a program of its own). */
export interface HostCommand {
  readonly file: string;
  readonly args: readonly string[];
}

/** Where a host binary comes from: a file to run, or a source checkout's build script to run. */
export type HostBinarySource = ({ kind: 'file' } & HostCommand) | { kind: 'build'; script: string; args: readonly string[] };

/** The variable that names the binary's path. */
export function hostBinaryVariable(bin: HostBinary): string {
  return bin.variable ?? `DEVTOOL_${bin.name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_BIN`;
}

/** The npm package that carries the host programs of `machine`. */
export function platformPackageName(machine: Machine): string {
  return `devtool-${machine.platform}-${machine.arch}`;
}

/**
 * Where `bin` comes from on `machine` (see the top of this file), or a DevtoolError of one line.
 * `root` is the CLI's package folder; `version` the CLI's, which the platform package must match.
 */
export function hostBinarySource(
  bin: HostBinary,
  machine: Machine,
  env: Readonly<NodeJS.ProcessEnv>,
  root: string,
  version: string,
  probe: Probe,
): HostBinarySource {
  const variable = hostBinaryVariable(bin);
  const explicit = env[variable]?.trim();
  if (explicit) {
    if (!probe.exists(explicit)) throw new DevtoolError(`${variable} is ${explicit}, which does not exist`);
    return { kind: 'file', file: explicit, args: [] };
  }
  const name = platformPackageName(machine);
  const installed = probe.installedPackage(name);
  if (installed) {
    if (installed.version !== version) {
      throw new DevtoolError(`${name} is version ${installed.version}, devtool ${version}: install ${name}-${version}.tgz with devtool, or set ${variable}`);
    }
    const path = join(installed.dir, 'bin', executableName(HOST_BUNDLE, machine.platform));
    if (!probe.exists(path)) throw new DevtoolError(`${name} ${installed.version} has no ${path}; install it again, or set ${variable}`);
    return { kind: 'file', file: path, args: [bin.name] };
  }
  const script = join(root, bin.buildScript[0]!);
  if (probe.exists(script)) return { kind: 'build', script, args: bin.buildScript.slice(1) };
  const key = `${machine.platform}-${machine.arch}`;
  if (!(RELEASE_PLATFORMS as readonly string[]).includes(key)) {
    throw new DevtoolError(
      `devtool has no ${bin.name} for ${machine.platform}/${machine.arch} (releases have ${RELEASE_PLATFORMS.join(', ')}); set ${variable} to one`,
    );
  }
  // The same line for every program: a command that needs several says it once.
  throw new DevtoolError(
    `the package ${name}, devtool's programs for this machine, is not installed: install it with devtool ` +
      `(npm install -g devtool-${version}.tgz ${name}-${version}.tgz)`,
  );
}

/** The real file system, resolving packages from the CLI's package folder `root`. */
export function installedProbe(root: string): Probe {
  const require = createRequire(join(root, 'package.json'));
  return {
    exists: existsSync,
    installedPackage(name) {
      let manifest: string;
      try {
        manifest = require.resolve(`${name}/package.json`);
      } catch {
        return undefined;
      }
      const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string };
      return { dir: dirname(manifest), version: version ?? 'unknown' };
    },
  };
}

/**
 * Each host program's path, or how a source checkout builds it, without building any (`doctor`);
 * and one line per distinct problem.
 */
export function hostBinaryReport(env: Readonly<NodeJS.ProcessEnv>): { programs: Record<string, string>; problems: string[] } {
  const root = packageRoot();
  const probe = installedProbe(root);
  const programs: Record<string, string> = {};
  const problems = new Set<string>();
  for (const bin of HOST_BINARIES) {
    try {
      const source = hostBinarySource(bin, thisMachine(), env, root, VERSION, probe);
      programs[bin.name] = source.kind === 'file' ? [source.file, ...source.args].join(' ') : `built on demand by ${bin.buildScript.join(' ')}`;
    } catch (err) {
      if (!(err instanceof DevtoolError)) throw err;
      programs[bin.name] = 'missing';
      problems.add(err.message);
    }
  }
  return { programs, problems: [...problems] };
}

/** This process's machine. */
export function thisMachine(): Machine {
  return { platform: hostPlatform, arch: process.arch };
}

/** How to run a host binary, building it first in a source checkout. */
export async function locateHostBinary(bin: HostBinary, env: Readonly<NodeJS.ProcessEnv>): Promise<HostCommand> {
  const root = packageRoot();
  const source = hostBinarySource(bin, thisMachine(), env, root, VERSION, installedProbe(root));
  if (source.kind === 'file') return { file: source.file, args: source.args };
  const command = bin.buildScript.join(' ');
  try {
    const { stdout } = await promisify(execFile)('bash', [source.script, ...source.args], { cwd: root, env: { ...env }, maxBuffer: 1 << 20 });
    const path = stdout.trim().split('\n').at(-1) ?? '';
    if (!existsSync(path)) throw new Error(`${command} printed no existing path`);
    return { file: path, args: [] };
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').at(-1);
    throw new DevtoolError(`cannot build ${bin.name} for this machine (${command}): ${detail}`);
  }
}

/** The folder holding devtool's package.json, from wherever this code runs (src/ or a dist bundle). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'devtool') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('devtool package root not found');
    dir = parent;
  }
}
