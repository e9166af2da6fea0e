/**
 * Go programs the CLI runs on the user's machine: Syncthing (the local end of file sync) and
 * devtool-buildkit (the BuildKit client). Where each comes from, first match wins:
 *  1. `DEVTOOL_<NAME>_BIN` (DEVTOOL_SYNCTHING_BIN, DEVTOOL_AGENT_BIN, DEVTOOL_BUILDKIT_BIN): a path, for tests and
 *     unusual installs;
 *  2. `<package>/bin/<name>-linux-<arch>`: where a packaged release puts them;
 *  3. in a source checkout, the project's own build script, which builds on demand and caches
 *     outside the clone (agent/build.sh, buildkit/build.sh); it prints the binary's path.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DevtoolError } from '../base/errors.ts';

export interface HostBinary {
  /** File name, and the NAME of DEVTOOL_<NAME>_BIN upper-cased. */
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

const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };

/** The path of a host binary, building it first in a source checkout. */
export async function locateHostBinary(bin: HostBinary, env: Readonly<NodeJS.ProcessEnv>): Promise<string> {
  const variable = bin.variable ?? `DEVTOOL_${bin.name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_BIN`;
  const explicit = env[variable]?.trim();
  if (explicit) {
    if (!existsSync(explicit)) throw new DevtoolError(`${variable} is ${explicit}, which does not exist`);
    return explicit;
  }
  const root = packageRoot();
  const packaged = join(root, 'bin', `${bin.name}-${process.platform}-${GOARCH[process.arch] ?? process.arch}`);
  if (existsSync(packaged)) return packaged;
  const script = join(root, bin.buildScript[0]!);
  if (!existsSync(script)) {
    throw new DevtoolError(`this devtool package has no ${bin.name} for ${process.platform}/${process.arch} (looked for ${packaged}); set ${variable} to one`);
  }
  try {
    const { stdout } = await promisify(execFile)('bash', [script, ...bin.buildScript.slice(1)], { cwd: root, env: { ...env }, maxBuffer: 1 << 20 });
    const path = stdout.trim().split('\n').at(-1) ?? '';
    if (!existsSync(path)) throw new Error(`${bin.buildScript.join(' ')} printed no existing path`);
    return path;
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').at(-1);
    throw new DevtoolError(`cannot build ${bin.name} for this machine (${bin.buildScript.join(' ')}): ${detail}`);
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
