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
import { workloadState, type WorkloadRef, type WorkloadState } from '../kube/workloads.ts';
import { DEV_LABEL, DEV_POD_LABEL, FOLDER_ANNOTATION } from './names.ts';

export const RESTARTED_AT_ANNOTATION = 'devtool.dev/restarted-at';

/**
 * What restart asks of the dev container's namespace, and nothing more, so a test drives it with an
 * in-memory fake; `restartApi` is the real one.
 */
export interface RestartApi {
  /** The mirror Deployments of `devName` (one per folder it is active from). */
  mirrors(devName: string): Promise<k8s.V1Deployment[]>;
  /** Sets these annotations on the pod template of the Deployment `name` (a merge patch: new pods follow). */
  annotateTemplate(name: string, annotations: Record<string, string>): Promise<void>;
  /** The workload's state (kube/workloads.ts: ready, progressing, failed and why, missing). */
  state(ref: WorkloadRef): Promise<WorkloadState>;
  /** The pods a label selector selects. */
  pods(labelSelector: string): Promise<k8s.V1Pod[]>;
}

/** The RestartApi of a client's namespace. */
export function restartApi(client: KubeClient): RestartApi {
  const namespace = client.namespace;
  return {
    mirrors: async (devName) => (await client.apps.listNamespacedDeployment({ namespace, labelSelector: `${DEV_LABEL}=${devName}` })).items,
    annotateTemplate: async (name, annotations) => {
      const body = { spec: { template: { metadata: { annotations } } } };
      await client.apps.patchNamespacedDeployment({ name, namespace, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    },
    state: (ref) => workloadState(client, ref),
    pods: async (labelSelector) => (await client.core.listNamespacedPod({ namespace, labelSelector })).items,
  };
}

export async function isDevContainerActive(api: RestartApi, devName: string, folder: string): Promise<boolean> {
  return (await api.mirrors(devName)).some((d) => d.metadata?.annotations?.[FOLDER_ANNOTATION] === folder);
}

/** Restarts the dev pod of `devName` active from `folder`, and waits until the new one is ready. */
export async function restartDevContainer(
  api: RestartApi,
  devName: string,
  folder: string,
  opts: { now: () => Date; timeoutMs: number; step?: (message: string) => void },
): Promise<string> {
  const mirrors = await api.mirrors(devName);
  const mirror = mirrors.find((d) => d.metadata?.annotations?.[FOLDER_ANNOTATION] === folder);
  if (!mirror) {
    const elsewhere = mirrors.length > 0 ? ` (it is active from another folder or machine)` : '';
    throw new DevtoolError(`no dev container is active for ${devName} from this folder${elsewhere}: run 'devtool up ${devName}' first`);
  }
  const name = mirror.metadata!.name!;
  opts.step?.(`restarting the dev pod of ${devName} (${name})`);
  const stamp = opts.now().toISOString();
  await api.annotateTemplate(name, { [RESTARTED_AT_ANNOTATION]: stamp });
  const ref = { kind: 'Deployment' as const, name, podSelector: `${DEV_POD_LABEL}=${devName}` };
  await pollUntil(opts.timeoutMs, `the restarted dev pod of ${devName} to be ready`, async () => {
    const state = await api.state(ref);
    if (state.state === 'failed') throw new DevtoolError(`the restarted dev pod of ${devName} failed: ${state.reason}`);
    // The controller first has to see the new template: only pods made after the stamp count.
    return state.state === 'ready' && (await onlyNewPods(api, ref.podSelector, stamp));
  });
  return name;
}

async function onlyNewPods(api: RestartApi, selector: string, stamp: string): Promise<boolean> {
  const pods = await api.pods(selector);
  return (
    pods.length > 0 &&
    pods.every((p) => p.metadata?.annotations?.[RESTARTED_AT_ANNOTATION] === stamp && p.status?.phase === 'Running' && !p.metadata.deletionTimestamp)
  );
}
