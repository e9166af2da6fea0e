/**
 * The agent copied into a dev container through the Kubernetes API, for clusters that cannot pull
 * a devtool-bin image (no registry, an air gap, an image that is not there). The dev container
 * starts with a shell that waits for the agent in its emptyDir (mirror.ts, waitingForAgent); the
 * CLI reads the node's architecture, takes the programs for it from its own install
 * (agent-binaries.ts), and streams each one in with an exec of `cat`, checked by its SHA-256 before
 * it is renamed into place; the shell then becomes the agent. Every dev pod of that form gets its
 * copy: the first one from `up`'s wait, a replacement from the tunnel's redial (up-session.ts).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import { oneLine } from '../base/text.ts';
import type { KubeClient } from '../kube/client.ts';
import type { ExecCapture, StdinWriter } from '../kube/exec.ts';
import type { AgentPrograms } from './agent-binaries.ts';
import { agentArch, copyCommand, shellMissing, waitingForCopy } from './agent-delivery.ts';
import { AGENT_BIN_DIR } from './mirror.ts';
import { ofSpec } from './names.ts';

/** What `up` says once the first copy is done. */
export const COPIED_LINE = 'agent copied into the dev container through the Kubernetes API (no registry)';

/** What the copy asks of the cluster: agentCopyApi is the real one, a test hands an in-memory one. */
export interface AgentCopyApi {
  /** The architecture a Node says it has; undefined when it cannot be read. */
  nodeArch(nodeName: string | undefined): Promise<string | undefined>;
  /** Runs a command in a pod's container, with the file at `inputPath` as its standard input (none: empty). */
  exec(pod: string, container: string, command: string[], inputPath?: string): Promise<ExecCapture>;
}

export interface AgentCopyOptions {
  cluster: AgentCopyApi;
  /** The agent and Syncthing for linux/`arch` (agentPrograms, from this install). */
  programs(arch: string): Promise<AgentPrograms>;
  /** The devtool context, named in the refusals. */
  context: string;
  log(line: string): void;
  /** Once, after the first copy. */
  copied(line: string): void;
}

/**
 * Copies the agent into each dev pod that waits for it, once per pod. offer() starts the copies
 * and throws, in one line, what stops them: a dev image without a shell, no programs for the
 * node's architecture, a copy that failed (thrown once, then tried again at the next offer).
 */
export class AgentCopies {
  private readonly copying = new Set<string>();
  private failure?: Error;
  private said = false;
  /** Per architecture: the programs and their digests, looked up once. */
  private readonly programs = new Map<string, Promise<CheckedPrograms>>();

  constructor(private readonly o: AgentCopyOptions) {}

  /** Starts the copy into every pod of `specHash` (all, when undefined) that waits for its agent. */
  offer(pods: readonly V1Pod[], specHash?: string): void {
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure;
    for (const pod of pods) {
      if (specHash !== undefined && !ofSpec(pod, specHash)) continue;
      const image = shellMissing(pod);
      if (image !== undefined) {
        throw new DevtoolError(
          `the dev image ${image} has no shell (/bin/sh), so the agent cannot be copied into it through the Kubernetes API: set DEVTOOL_BIN_IMAGE ` +
            `to a devtool-bin image the cluster can pull, or give the context a registry ('devtool context use ${this.o.context} --registry HOST')`,
        );
      }
      const container = waitingForCopy(pod);
      const name = pod.metadata?.name;
      if (!container || !name || this.copying.has(name)) continue;
      this.copying.add(name);
      void this.copy(pod, name, container).then(
        () => {
          if (this.said) return;
          this.said = true;
          this.o.copied(COPIED_LINE);
        },
        (err: unknown) => {
          // Said once; a later offer tries this pod again (the tunnel's next redial, if `up` goes on).
          this.copying.delete(name);
          this.failure = err instanceof DevtoolError ? err : new DevtoolError(`cannot copy the agent into dev pod ${name}: ${(err as Error).message}`);
        },
      );
    }
  }

  private async copy(pod: V1Pod, name: string, container: string): Promise<void> {
    const started = Date.now();
    const arch = await nodeArch(this.o.cluster, pod, container);
    if (!this.programs.has(arch)) this.programs.set(arch, this.o.programs(arch).then(checkedPrograms));
    const p = await this.programs.get(arch)!;
    // Syncthing first: the shell starts the agent as soon as it is there, and the agent starts Syncthing
    // (a release's host bundle is one file, the agent with Syncthing inside).
    const how: string[] = [];
    for (const file of p.syncthing ? [p.syncthing, p.agent] : [p.agent]) how.push(await copyProgram(this.o.cluster, name, container, file));
    const what = p.syncthing ? 'agent and Syncthing' : 'agent (Syncthing inside)';
    this.o.log(`pod ${name}: ${what} for linux/${arch} copied in ${Date.now() - started} ms (checked by ${how.join(', ')})`);
  }
}

interface CheckedProgram {
  path: string;
  /** Its name in the dev container. */
  target: string;
  sha256: string;
  size: number;
}

interface CheckedPrograms {
  agent: CheckedProgram;
  /** Undefined: the agent carries Syncthing. */
  syncthing?: CheckedProgram;
}

async function checkedPrograms(found: AgentPrograms): Promise<CheckedPrograms> {
  const [agent, syncthing] = await Promise.all([checked(found.agent, 'devtool-agent'), found.syncthing ? checked(found.syncthing, 'syncthing') : undefined]);
  return syncthing ? { agent, syncthing } : { agent };
}

async function checked(path: string, name: string): Promise<CheckedProgram> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return { path, target: `${AGENT_BIN_DIR}/${name}`, sha256: hash.digest('hex'), size: (await stat(path)).size };
}

/** The node's architecture: its Node object's, else (no right to read nodes) what the dev container's `uname -m` says. */
async function nodeArch(cluster: AgentCopyApi, pod: V1Pod, container: string): Promise<string> {
  let said = await cluster.nodeArch(pod.spec?.nodeName);
  if (said === undefined) {
    const r = await cluster.exec(pod.metadata?.name ?? '', container, ['uname', '-m']);
    said = r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
  }
  const arch = agentArch(said);
  if (!arch)
    throw new DevtoolError(
      `dev pod ${pod.metadata?.name} runs on linux/${said ?? 'an unknown architecture'}, for which there is no agent (amd64 and arm64 only)`,
    );
  return arch;
}

/** The architecture a Node says it has; undefined when it cannot be read (namespace users may not read nodes). */
export async function readNodeArch(client: KubeClient, nodeName: string | undefined): Promise<string | undefined> {
  if (!nodeName) return undefined;
  try {
    const node = await client.core.readNode({ name: nodeName });
    return node.metadata?.labels?.['kubernetes.io/arch'] ?? node.status?.nodeInfo?.architecture;
  } catch {
    return undefined;
  }
}

/** The AgentCopyApi of a client's namespace. */
export function agentCopyApi(client: KubeClient): AgentCopyApi {
  return {
    nodeArch: (nodeName) => readNodeArch(client, nodeName),
    exec: async (pod, container, command, inputPath) => {
      const { execCapture, STDIN_HEADROOM } = await import('../kube/exec.ts');
      const size = inputPath ? (await stat(inputPath)).size : 0;
      // A minute, plus a second per MB: a copy slower than that is stuck.
      const timeoutMs = 60_000 + size / 1000;
      return execCapture(client, pod, container, command, { timeoutMs, maxBytes: 4096, ...(inputPath ? { stdin: fileInput(inputPath, STDIN_HEADROOM) } : {}) });
    },
  };
}

const CHUNK_BYTES = 256 * 1024;

/** A file as an exec's standard input, read into messages that leave `headroom` free (kube/exec.ts). */
function fileInput(path: string, headroom: number): StdinWriter {
  return async (send) => {
    const file = await open(path);
    try {
      for (;;) {
        const message = Buffer.allocUnsafe(headroom + CHUNK_BYTES);
        const { bytesRead } = await file.read(message, headroom, CHUNK_BYTES, null);
        if (bytesRead === 0) return;
        await send(message.subarray(0, headroom + bytesRead));
      }
    } finally {
      await file.close();
    }
  };
}

async function copyProgram(cluster: AgentCopyApi, pod: string, container: string, p: CheckedProgram): Promise<string> {
  const r = await cluster.exec(pod, container, copyCommand(p.target, p.sha256, p.size), p.path);
  if (r.code !== 0) {
    const why = oneLine(r.stderr.trim().split('\n').pop() || r.message || `exit code ${r.code}`);
    throw new DevtoolError(`cannot copy ${p.target} into dev pod ${pod}: ${why}`);
  }
  return r.stdout.toString('utf8').trim();
}
