/**
 * How the agent reaches the dev pod, the pure decisions (docs/agent-delivery.md). From a devtool-bin
 * image when one is known: the init container copies it (mirror.ts). When none is known, or the
 * kubelet says the one named cannot be pulled, the CLI pushes one to the context's registry
 * (agent-image.ts), or the dev container starts with a shell that waits and the CLI copies the
 * agent in through the Kubernetes API (agent-inject.ts), with no registry involved.
 */
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { AGENT_SHELL, INSTALLER_NAME, waitsForCopiedAgent } from './mirror.ts';

/** The devtool-bin image to use, and where its name came from. */
export interface AgentImageChoice {
  image: string;
  /** The context's registry: the CLI may push the image there when it is missing (agent-image.ts). */
  fromRegistry: boolean;
}

/** The devtool-bin image to use, if any: the one named, else the context's registry's, else the release's. */
export function chooseAgentImage(o: {
  /** DEVTOOL_BIN_IMAGE. */
  named: string | undefined;
  /** The context's registry. */
  registry: string | undefined;
  version: string;
  /** The image the installed release names (undefined in a source checkout). */
  release: string | undefined;
}): AgentImageChoice | undefined {
  const named = o.named?.trim();
  if (named) return { image: named, fromRegistry: false };
  if (o.registry) return { image: `${o.registry.replace(/\/+$/, '')}/devtool-bin:${o.version}`, fromRegistry: true };
  return o.release ? { image: o.release, fromRegistry: false } : undefined;
}

const PULL_ERRORS = ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull'];

/** Why the pod's agent installer cannot pull its image, if the kubelet says it cannot. */
export function agentImagePullError(pod: V1Pod): string | undefined {
  const installer = (pod.status?.initContainerStatuses ?? []).find((c) => c.name === INSTALLER_NAME);
  const waiting = installer?.state?.waiting;
  if (!waiting || !PULL_ERRORS.includes(waiting.reason ?? '')) return undefined;
  return waiting.reason ?? 'ErrImagePull';
}

const START_ERRORS = ['RunContainerError', 'CreateContainerError', 'StartError'];

/** The dev container that waits for the agent, if the pod has one. */
export function agentWaiter(pod: V1Pod): V1Container | undefined {
  return (pod.spec?.containers ?? []).find((c) => waitsForCopiedAgent(c));
}

/** The image of the pod's waiting dev container, when the runtime could not start its shell. */
export function shellMissing(pod: V1Pod): string | undefined {
  const waiter = agentWaiter(pod);
  const status = waiter && (pod.status?.containerStatuses ?? []).find((c) => c.name === waiter.name);
  if (!waiter || !status) return undefined;
  const noShell = [status.state?.waiting, status.state?.terminated, status.lastState?.terminated].some(
    (s) => START_ERRORS.includes(s?.reason ?? '') && /no such file|not found/.test(s?.message ?? '') && (s?.message ?? '').includes(AGENT_SHELL),
  );
  return noShell ? (waiter.image ?? '') : undefined;
}

/** The name of the pod's dev container when it runs its shell and waits for the agent to be copied in. */
export function waitingForCopy(pod: V1Pod): string | undefined {
  if (pod.metadata?.deletionTimestamp) return undefined;
  const waiter = agentWaiter(pod);
  const status: V1ContainerStatus | undefined = waiter && (pod.status?.containerStatuses ?? []).find((c) => c.name === waiter.name);
  return status?.state?.running && status.started !== true ? waiter?.name : undefined;
}

/** The Go architecture of a node (its `kubernetes.io/arch` label, nodeInfo, or `uname -m`); undefined for those the agent is not built for. */
export function agentArch(arch: string | undefined): 'amd64' | 'arm64' | undefined {
  const a = arch?.trim();
  if (a === 'amd64' || a === 'x86_64') return 'amd64';
  if (a === 'arm64' || a === 'aarch64') return 'arm64';
  return undefined;
}

/**
 * The command that writes one program into the dev container from its standard input: to a
 * temporary name, checked against the SHA-256 (or, in an image without sha256sum, the size) the CLI
 * computed, then made executable and renamed into place, so that the waiting shell never runs a
 * part. Prints how it checked; exits 3 on a mismatch.
 */
export function copyCommand(path: string, sha256: string, size: number): string[] {
  const script = [
    'set -e',
    't="$1.part"',
    'cat > "$t"',
    'if command -v sha256sum >/dev/null 2>&1; then',
    '  h=$(sha256sum < "$t"); h=${h%% *}',
    '  if [ "$h" != "$2" ]; then rm -f "$t"; echo "sha256 $h, not $2" >&2; exit 3; fi; how=sha256',
    'else',
    '  n=$(wc -c < "$t"); n=$((n + 0))',
    '  if [ "$n" != "$3" ]; then rm -f "$t"; echo "$n bytes, not $3" >&2; exit 3; fi; how=size',
    'fi',
    'chmod 0755 "$t"',
    'mv -f "$t" "$1"',
    'echo "$how"',
  ].join('\n');
  return [AGENT_SHELL, '-c', script, 'devtool-copy', path, sha256, String(size)];
}
