/**
 * The agent's programs for a Linux node, from this install of devtool, for copying into a dev
 * container (agent-inject.ts) or into an image for the context's registry (agent-image.ts). A
 * packaged release carries them in its platform package `devtool-linux-<x64|arm64>`:
 * `bin/devtool-host`, the host bundle (agent/host: the agent with Syncthing inside, the very binary
 * the CLI runs on that platform, a static Linux build), which placed as `devtool-agent` is the
 * agent and runs itself as Syncthing; a source checkout builds the two programs (agent/build.sh).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { DevtoolError } from '../base/errors.ts';
import { HOST_BUNDLE, packageRoot } from '../binaries/host-binary.ts';

export interface AgentPrograms {
  /** The file to place as devtool-agent. */
  agent: string;
  /** The file to place as syncthing beside it; undefined: the agent is the host bundle, Syncthing inside. */
  syncthing?: string;
}

const NPM_ARCH: Record<string, string> = { amd64: 'x64', arm64: 'arm64' };

/** The platform package of Linux on `arch` (Go's name). */
export function linuxPackage(arch: string): string {
  return `devtool-linux-${NPM_ARCH[arch] ?? arch}`;
}

/**
 * Where the platform package may be, for the package at `root`: its own node_modules (a local
 * install), or beside it (a global install puts both in one node_modules).
 */
export function platformPackageDirs(root: string, arch: string): string[] {
  const name = linuxPackage(arch);
  return [join(root, 'node_modules', name), join(dirname(root), name)];
}

/** The one line when this install has no programs for the node's architecture. */
export function noProgramsMessage(arch: string): string {
  return (
    `this devtool install has no agent for linux/${arch} (the node's architecture) to copy into the dev container: install ${linuxPackage(arch)} ` +
    `beside devtool, or set DEVTOOL_BIN_IMAGE to a devtool-bin image the cluster can pull, or give the context a registry ` +
    `('devtool context use <context> --registry HOST')`
  );
}

/** The agent and Syncthing for linux/`arch` (amd64 or arm64), building them first in a source checkout. */
export async function agentPrograms(arch: string, env: Readonly<NodeJS.ProcessEnv>, root = packageRoot()): Promise<AgentPrograms> {
  for (const dir of platformPackageDirs(root, arch)) {
    const bundle = join(dir, 'bin', HOST_BUNDLE);
    if (existsSync(bundle)) return { agent: bundle };
  }
  const script = join(root, 'agent', 'build.sh');
  if (!existsSync(script)) throw new DevtoolError(noProgramsMessage(arch));
  try {
    // One architecture: a node's other one would cost a Syncthing build for nothing.
    const { stdout } = await promisify(execFile)('bash', [script, 'binaries'], {
      cwd: root,
      env: { ...env, DEVTOOL_BIN_ARCHES: arch },
      maxBuffer: 1 << 20,
    });
    const [agentEntry, syncthingEntry] = stdout.trim().split('\n').slice(-2);
    const built = { agent: join(agentEntry ?? '', `linux-${arch}`, 'devtool-agent'), syncthing: join(syncthingEntry ?? '', `linux-${arch}`, 'syncthing') };
    if (!existsSync(built.agent) || !existsSync(built.syncthing)) throw new Error('agent/build.sh binaries printed no programs');
    return built;
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').at(-1);
    throw new DevtoolError(`cannot build the agent for linux/${arch} (agent/build.sh binaries): ${detail}`);
  }
}
