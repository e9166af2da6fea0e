/**
 * Pod Security Admission before the swap: `up` asks the API server whether the namespace would
 * admit the dev pod (a Pod created with dryRun=All goes through the same admission as the mirror's
 * ReplicaSet would, and PSA answers it with its refusal), before it scales the original down.
 * Without this, a refused dev pod is only seen as a ReplicaSet event after the original is gone.
 */
import type { V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';
import type { DeploymentObject } from '../kube/objects.ts';
import type { DevService } from '../manifest/model.ts';

/** What PSA says when it refuses: `violates PodSecurity "restricted:latest": <why>, <why>`. */
const REFUSAL = /violates PodSecurity "([^"]+)": (.*)$/s;

/** The policy ("restricted:latest") and reasons of a PSA refusal, or undefined for any other answer. */
export function podSecurityRefusal(message: string): { policy: string; reasons: string } | undefined {
  const m = REFUSAL.exec(message);
  return m ? { policy: m[1]!, reasons: m[2]!.trim() } : undefined;
}

/** The one line `up` fails with when the namespace's policy refuses the dev pod. */
export function refusalMessage(p: {
  devName: string;
  namespace: string;
  policy: string;
  reasons: string;
  /** The original's own pod is refused too: the dev section is not what to change. */
  originalRefused: boolean;
  original?: string;
  /** Its kind in words: deployment (the default) or statefulset. */
  originalKind?: string;
  dev: DevService;
}): string {
  const level = p.policy.split(':')[0];
  const head =
    `dev container ${p.devName} cannot run in namespace ${p.namespace}: ` +
    `its Pod Security policy "${level}" (label pod-security.kubernetes.io/enforce) refuses ${p.reasons}`;
  const fix = p.originalRefused
    ? `${p.originalKind ?? 'deployment'} ${p.original}'s own pods are refused too: make its pod template comply, or ask for a namespace whose policy admits it`
    : p.dev.securityContext
      ? `change services.${p.devName}.securityContext in the manifest (the fields named above) to comply`
      : `the manifest's image${p.dev.image ? ` ${p.dev.image}` : ''} or settings ask for what the original does not: make services.${p.devName} comply`;
  return `${head}; ${fix}; nothing was changed`;
}

/**
 * Fails with one line when the namespace's Pod Security policy would refuse the dev pod. Any other
 * answer to the dry run (RBAC forbids creating pods, a quota the original's pods fill, an old API
 * server) is not a verdict on the pod: `up` goes on and the pod's own wait reports what happens.
 */
export async function checkPodSecurity(
  client: KubeClient,
  p: { devName: string; dev: DevService; mirror: DeploymentObject; original?: WithPodTemplate & { kind?: string } },
): Promise<void> {
  const refused = await dryRunRefusal(client, p.mirror);
  if (!refused) return;
  const originalRefused = p.original ? (await dryRunRefusal(client, p.original)) !== undefined : false;
  throw new DevtoolError(
    refusalMessage({
      ...refused,
      devName: p.devName,
      namespace: client.namespace,
      originalRefused,
      original: p.original?.metadata.name,
      ...(p.original?.kind ? { originalKind: p.original.kind.toLowerCase() } : {}),
      dev: p.dev,
    }),
  );
}

/** A Deployment or a StatefulSet: its name and pod template are what the dry run needs. */
type WithPodTemplate = { metadata: { name: string }; spec?: { template?: V1PodTemplateSpec } };

async function dryRunRefusal(client: KubeClient, d: WithPodTemplate): Promise<{ policy: string; reasons: string } | undefined> {
  const template = d.spec?.template;
  if (!template?.spec) return undefined;
  try {
    await client.core.createNamespacedPod({ namespace: client.namespace, body: podOf(d.metadata.name, template), dryRun: 'All' });
    return undefined;
  } catch (err) {
    return podSecurityRefusal(describeKubeError(err));
  }
}

/** A pod as the Deployment's ReplicaSet would make it (its name is only for the dry run). */
export function podOf(name: string, template: V1PodTemplateSpec): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: `${name}-`, labels: template.metadata?.labels, annotations: template.metadata?.annotations },
    spec: template.spec,
  };
}
