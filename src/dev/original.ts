/**
 * The original workload a dev container replaces (a Deployment or a StatefulSet, statefulset.ts),
 * and the annotations that let `down` restore it
 * from the cluster alone: its replica count before `up`, a hash of its spec, and the folder that
 * activated dev mode. Writes are merge patches of just those fields, so nothing else of the
 * original (and none of its field ownership) changes.
 */
import * as k8s from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';
import type { DevService } from '../manifest/model.ts';
import {
  DEV_ANNOTATIONS_ON_ORIGINAL,
  DEV_LABEL,
  FOLDER_ANNOTATION,
  ORIGIN_ANNOTATION,
  ORIGINAL_HASH_ANNOTATION,
  REPLICAS_ANNOTATION,
  stableJson,
} from './names.ts';
import { sha256 } from '../base/hash.ts';
import { kindWord, type OriginalKind, type OriginalObject } from './statefulset.ts';

/**
 * The original by the dev name, or by the manifest's `selector`: a Deployment or a StatefulSet,
 * whichever exists (both is an error); undefined when there is none.
 */
export async function findOriginal(client: KubeClient, devName: string, dev: DevService): Promise<OriginalObject | undefined> {
  const ns = client.namespace;
  let found: OriginalObject[];
  let what: string;
  if (Object.keys(dev.selector).length > 0) {
    const labelSelector = Object.entries(dev.selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const [deployments, statefulSets] = await Promise.all([
      client.apps.listNamespacedDeployment({ namespace: ns, labelSelector }),
      client.apps.listNamespacedStatefulSet({ namespace: ns, labelSelector }),
    ]);
    // A mirror copies the original's labels: never pick it as an original.
    found = [
      ...deployments.items.filter((d) => !d.metadata?.labels?.[DEV_LABEL]).map((d) => asOriginal('Deployment', d)),
      ...statefulSets.items.map((d) => asOriginal('StatefulSet', d)),
    ];
    what = `services.${devName}.selector (${labelSelector}) matches`;
  } else {
    const [deployment, statefulSet] = await Promise.all([
      orUndefined(client.apps.readNamespacedDeployment({ name: devName, namespace: ns })),
      orUndefined(client.apps.readNamespacedStatefulSet({ name: devName, namespace: ns })),
    ]);
    found = [...(deployment ? [asOriginal('Deployment', deployment)] : []), ...(statefulSet ? [asOriginal('StatefulSet', statefulSet)] : [])];
    what = `services.${devName} names`;
  }
  if (found.length > 1)
    throw new DevtoolError(
      `${what} ${found.length} workloads in namespace ${ns} (${found.map((o) => `${kindWord(o.kind)} ${o.metadata.name}`).join(', ')}): ` +
        `set services.${devName}.selector to labels that only the one to develop has`,
    );
  return found[0];
}

async function orUndefined<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function notFoundMessage(devName: string, dev: DevService, namespace: string): string {
  const what = Object.keys(dev.selector).length > 0 ? `matching services.${devName}.selector` : `named "${devName}"`;
  return (
    `no Deployment or StatefulSet ${what} in namespace ${namespace}: deploy the application first ('devtool deploy'), set services.${devName}.selector in ` +
    `the manifest to the labels of the workload to develop, or set services.${devName}.autocreate: true for a standalone dev container`
  );
}

/** A workload read from the API server, with the apiVersion and kind it lacks there. */
export function asOriginal(kind: OriginalKind, d: k8s.V1Deployment | k8s.V1StatefulSet): OriginalObject {
  return { ...d, apiVersion: 'apps/v1', kind, metadata: { ...d.metadata, name: d.metadata!.name! } } as OriginalObject;
}

/** A hash of what `down` must give back: the spec without the replicas dev mode changes. */
export function originalSpecHash(d: OriginalObject): string {
  const { replicas: _changedByUp, ...rest } = d.spec ?? {};
  return sha256(stableJson(rest)).slice(0, 16);
}

export interface Recorded {
  replicas: number;
  hash?: string;
  folder?: string;
}

/** What `up` recorded on the original, if it did. */
export function recorded(d: OriginalObject): Recorded | undefined {
  const a = d.metadata.annotations ?? {};
  const replicas = a[REPLICAS_ANNOTATION];
  if (replicas === undefined || !/^\d+$/.test(replicas)) return undefined;
  return {
    replicas: Number(replicas),
    ...(a[ORIGINAL_HASH_ANNOTATION] ? { hash: a[ORIGINAL_HASH_ANNOTATION] } : {}),
    ...(a[FOLDER_ANNOTATION] ? { folder: a[FOLDER_ANNOTATION] } : {}),
  };
}

/**
 * Records the replicas and hash (unless an earlier `up` did: the replicas are 0 by then) and scales
 * the original to zero, in one patch.
 */
export async function recordAndScaleDown(client: KubeClient, d: OriginalObject, owner: DevOwner): Promise<void> {
  const annotations = recorded(d) ? ownerAnnotations(owner) : recordAnnotations(owner, d);
  await mergePatch(client, d, { metadata: { annotations }, spec: { replicas: 0 } });
}

/** The folder that activates dev mode: its hash (names.ts) and the same in words (origin.ts). */
export interface DevOwner {
  folder: string;
  origin: string;
}

function ownerAnnotations(owner: DevOwner): Record<string, string> {
  return { [FOLDER_ANNOTATION]: owner.folder, [ORIGIN_ANNOTATION]: owner.origin };
}

/** What `up` (and the original watch, after a redeploy) records on the original: its owner, replicas and spec hash. */
export function recordAnnotations(owner: DevOwner, d: OriginalObject): Record<string, string> {
  return { ...ownerAnnotations(owner), [REPLICAS_ANNOTATION]: String(d.spec?.replicas ?? 1), [ORIGINAL_HASH_ANNOTATION]: originalSpecHash(d) };
}

/** Gives back the recorded replicas and removes every annotation devtool added. */
export async function restoreOriginal(client: KubeClient, d: OriginalObject, rec: Recorded): Promise<void> {
  await mergePatch(client, d, {
    metadata: { annotations: Object.fromEntries(DEV_ANNOTATIONS_ON_ORIGINAL.map((a) => [a, null])) },
    spec: { replicas: rec.replicas },
  });
}

async function mergePatch(client: KubeClient, d: OriginalObject, body: object): Promise<void> {
  const name = d.metadata.name;
  const request = { name, namespace: client.namespace, body };
  const asMergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  try {
    if (d.kind === 'StatefulSet') await client.apps.patchNamespacedStatefulSet(request, asMergePatch);
    else await client.apps.patchNamespacedDeployment(request, asMergePatch);
  } catch (err) {
    throw new DevtoolError(`cannot update ${kindWord(d.kind)} ${name} in namespace ${client.namespace}: ${describeKubeError(err)}`);
  }
}
