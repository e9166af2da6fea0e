/**
 * The agent kept on the mirror's claim. A dev pod with a claim gets the agent from its init
 * container, as any other, and the agent copies itself into its state folder on the claim
 * (mirror.ts, agentKeptDir; `$DEVTOOL_KEEP_BINARIES` of `supervise`); `up` then records that on the claim, and
 * the next dev pod of the same agent build runs it from there without the init container, which
 * costs the kubelet one more round of about a second (docs/dev-containers.md, "How long `up` takes").
 *
 * The record is an annotation written with a field manager of its own: the claim's server-side
 * applies (field manager `devtool`) neither own nor remove it. A claim whose content was lost
 * (the annotation says the agent is there, the dev container cannot exec it) is noticed at the
 * dev pod's first start error: `up` then copies the agent again (activate.ts).
 */
import * as k8s from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { AGENT_PATH, agentKeptDir, copiesAgent } from './mirror.ts';
import { AGENT_INSTALLED_ANNOTATION } from './names.ts';

const FIELD_MANAGER = 'devtool-agent-cache';

/**
 * Whether the dev pod can start without copying the agent: the claim holds this agent build, and
 * no dev Deployment already runs with the copy (a second `up` must not roll a running dev pod).
 */
export async function agentKeptOnClaim(
  client: KubeClient,
  claimName: string,
  agentImage: string,
  readMirror: () => Promise<{ spec?: { template?: { spec?: { initContainers?: { name: string }[] } } } } | undefined>,
): Promise<boolean> {
  let claim: k8s.V1PersistentVolumeClaim;
  try {
    claim = await client.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace: client.namespace });
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  if (claim.metadata?.annotations?.[AGENT_INSTALLED_ANNOTATION] !== agentKeptDir(agentImage)) return false;
  const mirror = await readMirror();
  return !mirror || !copiesAgent(mirror);
}

/** Records that the claim holds this agent build. */
export async function recordAgentOnClaim(client: KubeClient, claimName: string, agentImage: string): Promise<void> {
  const body = { metadata: { annotations: { [AGENT_INSTALLED_ANNOTATION]: agentKeptDir(agentImage) } } };
  await client.core.patchNamespacedPersistentVolumeClaim(
    { name: claimName, namespace: client.namespace, body, fieldManager: FIELD_MANAGER },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

/**
 * Pure: the pod's dev container could not exec the agent (the claim no longer holds it). The
 * runtime's error names the path: first as the waiting reason (RunContainerError), then as the
 * last state (StartError) once the kubelet backs off.
 */
export function agentMissing(pod: V1Pod): boolean {
  return (pod.status?.containerStatuses ?? []).some((c) =>
    [c.state?.waiting, c.state?.terminated, c.lastState?.terminated].some(
      (s) => START_ERRORS.includes(s?.reason ?? '') && (s?.message ?? '').includes(`${AGENT_PATH}: no such file`),
    ),
  );
}

const START_ERRORS = ['RunContainerError', 'CreateContainerError', 'StartError'];
