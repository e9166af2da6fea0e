/**
 * The original Deployment a dev container replaces, and the annotations that let `down` restore it
 * from the cluster alone: its replica count before `up`, a hash of its spec, and the folder that
 * activated dev mode. Writes are merge patches of just those fields, so nothing else of the
 * original (and none of its field ownership) changes.
 */
import * as k8s from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';
import type { DeploymentObject } from '../kube/objects.ts';
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

/** The original by the dev name, or by the manifest's `selector`; undefined when there is none. */
export async function findOriginal(client: KubeClient, devName: string, dev: DevService): Promise<DeploymentObject | undefined> {
  const ns = client.namespace;
  if (Object.keys(dev.selector).length > 0) {
    const labelSelector = Object.entries(dev.selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const list = await client.apps.listNamespacedDeployment({ namespace: ns, labelSelector });
    // A mirror copies the original's labels: never pick it as an original.
    const found = list.items.filter((d) => !d.metadata?.labels?.[DEV_LABEL]);
    if (found.length > 1)
      throw new DevtoolError(
        `services.${devName}.selector (${labelSelector}) matches ${found.length} deployments in namespace ${ns} ` +
          `(${found.map((d) => d.metadata?.name).join(', ')}): make it select one`,
      );
    return found[0] ? asObject(found[0]) : undefined;
  }
  try {
    return asObject(await client.apps.readNamespacedDeployment({ name: devName, namespace: ns }));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function notFoundMessage(devName: string, dev: DevService, namespace: string): string {
  const what = Object.keys(dev.selector).length > 0 ? `matching services.${devName}.selector` : `named "${devName}"`;
  return (
    `no Deployment ${what} in namespace ${namespace}: deploy the application first ('devtool deploy'), set services.${devName}.selector in ` +
    `the manifest to the labels of the Deployment to develop, or set services.${devName}.autocreate: true for a standalone dev container`
  );
}

function asObject(d: k8s.V1Deployment): DeploymentObject {
  return { ...d, apiVersion: 'apps/v1', kind: 'Deployment', metadata: { ...d.metadata, name: d.metadata!.name! } } as DeploymentObject;
}

/** A hash of what `down` must give back: the spec without the replicas dev mode changes. */
export function originalSpecHash(d: DeploymentObject): string {
  const { replicas: _changedByUp, ...rest } = d.spec ?? ({} as NonNullable<DeploymentObject['spec']>);
  return sha256(stableJson(rest)).slice(0, 16);
}

export interface Recorded {
  replicas: number;
  hash?: string;
  folder?: string;
}

/** What `up` recorded on the original, if it did. */
export function recorded(d: DeploymentObject): Recorded | undefined {
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
export async function recordAndScaleDown(client: KubeClient, d: DeploymentObject, owner: DevOwner): Promise<void> {
  const annotations = recorded(d) ? ownerAnnotations(owner) : recordAnnotations(owner, d);
  await mergePatch(client, d.metadata.name, { metadata: { annotations }, spec: { replicas: 0 } });
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
export function recordAnnotations(owner: DevOwner, d: DeploymentObject): Record<string, string> {
  return { ...ownerAnnotations(owner), [REPLICAS_ANNOTATION]: String(d.spec?.replicas ?? 1), [ORIGINAL_HASH_ANNOTATION]: originalSpecHash(d) };
}

/** Gives back the recorded replicas and removes every annotation devtool added. */
export async function restoreOriginal(client: KubeClient, d: DeploymentObject, rec: Recorded): Promise<void> {
  await mergePatch(client, d.metadata.name, {
    metadata: { annotations: Object.fromEntries(DEV_ANNOTATIONS_ON_ORIGINAL.map((a) => [a, null])) },
    spec: { replicas: rec.replicas },
  });
}

async function mergePatch(client: KubeClient, name: string, body: object): Promise<void> {
  try {
    await client.apps.patchNamespacedDeployment(
      { name, namespace: client.namespace, body },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  } catch (err) {
    throw new DevtoolError(`cannot update deployment ${name} in namespace ${client.namespace}: ${describeKubeError(err)}`);
  }
}
