/**
 * `restart`: new pods for dev containers that are active from this folder, to pick up what cannot
 * be hot-reloaded (the image's files, a changed Secret or ConfigMap). Done as kubectl's
 * `rollout restart` does it, by stamping the pod template, so the mirror keeps every other field;
 * `up`'s tunnel reconnects to the new pod by itself.
 */
import * as k8s from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { pollUntil } from '../kube/poll.ts';
import { workloadState } from '../kube/workloads.ts';
import { DEV_LABEL, DEV_POD_LABEL, FOLDER_ANNOTATION } from './names.ts';

export const RESTARTED_AT_ANNOTATION = 'devtool.dev/restarted-at';

async function mirrorsOf(client: KubeClient, devName: string) {
  return (await client.apps.listNamespacedDeployment({ namespace: client.namespace, labelSelector: `${DEV_LABEL}=${devName}` })).items;
}

export async function isDevContainerActive(client: KubeClient, devName: string, folder: string): Promise<boolean> {
  return (await mirrorsOf(client, devName)).some((d) => d.metadata?.annotations?.[FOLDER_ANNOTATION] === folder);
}

/** Restarts the dev pod of `devName` active from `folder`, and waits until the new one is ready. */
export async function restartDevContainer(
  client: KubeClient,
  devName: string,
  folder: string,
  opts: { now: () => Date; timeoutMs: number; step?: (message: string) => void },
): Promise<string> {
  const mirrors = await mirrorsOf(client, devName);
  const mirror = mirrors.find((d) => d.metadata?.annotations?.[FOLDER_ANNOTATION] === folder);
  if (!mirror) {
    const elsewhere = mirrors.length > 0 ? ` (it is active from another folder or machine)` : '';
    throw new DevtoolError(`no dev container is active for ${devName} from this folder${elsewhere}: run 'devtool up ${devName}' first`);
  }
  const name = mirror.metadata!.name!;
  opts.step?.(`restarting the dev pod of ${devName} (${name})`);
  const body = { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: opts.now().toISOString() } } } } };
  await client.apps.patchNamespacedDeployment({ name, namespace: client.namespace, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  const ref = { kind: 'Deployment' as const, name, podSelector: `${DEV_POD_LABEL}=${devName}` };
  const stamp = body.spec.template.metadata.annotations[RESTARTED_AT_ANNOTATION];
  await pollUntil(opts.timeoutMs, `the restarted dev pod of ${devName} to be ready`, async () => {
    const state = await workloadState(client, ref);
    if (state.state === 'failed') throw new DevtoolError(`the restarted dev pod of ${devName} failed: ${state.reason}`);
    // The controller first has to see the new template: only pods made after the stamp count.
    return state.state === 'ready' && (await onlyNewPods(client, ref.podSelector, stamp));
  });
  return name;
}

async function onlyNewPods(client: KubeClient, selector: string, stamp: string): Promise<boolean> {
  const pods = (await client.core.listNamespacedPod({ namespace: client.namespace, labelSelector: selector })).items;
  return (
    pods.length > 0 &&
    pods.every((p) => p.metadata?.annotations?.[RESTARTED_AT_ANNOTATION] === stamp && p.status?.phase === 'Running' && !p.metadata.deletionTimestamp)
  );
}
