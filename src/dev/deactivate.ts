/**
 * `down`: gives the original (Deployment or StatefulSet) back exactly as `up` found it (its recorded replicas; devtool's
 * annotations removed), deletes the mirror and its Secret, waits for the dev pods to end and, with
 * --volumes, deletes the claim. Everything it needs is on the cluster, so it works after `up` was
 * killed. Re-running it is harmless. A dev container activated from a folder of this machine that
 * no longer exists (deleted, moved) is taken over: nobody could end it from there.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import { deleteObject } from '../kube/apply.ts';
import { isNotFound, isTransient, type KubeClient } from '../kube/client.ts';
import type { ResourceKind } from '../kube/discovery.ts';
import { pollUntil } from '../kube/poll.ts';
import type { DevService } from '../manifest/model.ts';
import { DEV_POD_LABEL, FOLDER_ANNOTATION, mirrorName } from './names.ts';
import { originOf } from './origin.ts';
import { findOriginal, originalSpecHash, recorded, restoreOriginal, type Recorded } from './original.ts';
import { readMirror } from './activate.ts';
import { AUTOCREATED_ANNOTATION } from './standalone.ts';
import type { DevTarget } from './target.ts';
import { sleep } from '../base/wait.ts';
import { kindWord, type OriginalObject } from './statefulset.ts';

/** The objects of dev mode that deactivate deletes, besides what it gives back. */
const DEV_OBJECT_KINDS = {
  Deployment: { apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments' },
  Secret: { apiVersion: 'v1', kind: 'Secret', resource: 'secrets' },
  PersistentVolumeClaim: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims' },
} as const satisfies Record<string, ResourceKind>;

export type DevObjectKind = keyof typeof DEV_OBJECT_KINDS;

/**
 * What deactivate asks of the dev container's namespace, and nothing more, so a test drives it with
 * an in-memory fake; `deactivateApi` is the real one.
 */
export interface DeactivateApi {
  /** The original workload (Deployment or StatefulSet) of the dev container, if there is one (original.ts). */
  findOriginal(devName: string, dev: DevService): Promise<OriginalObject | undefined>;
  /** The mirror Deployment `name`, if there is one. */
  readMirror(name: string): Promise<V1Deployment | undefined>;
  /** Gives the original its recorded replicas back and removes devtool's annotations (original.ts). */
  restoreOriginal(original: OriginalObject, rec: Recorded): Promise<void>;
  /** Whether the object is there; an answer other than "not found" is thrown. */
  exists(kind: DevObjectKind, name: string): Promise<boolean>;
  /** Deletes the object, its dependents in the background; one already gone is fine. */
  delete(kind: DevObjectKind, name: string): Promise<void>;
  /** How many pods of the dev container `devName` there are. */
  countDevPods(devName: string): Promise<number>;
}

/** The DeactivateApi of a client's namespace. */
export function deactivateApi(client: KubeClient): DeactivateApi {
  const namespace = client.namespace;
  const read = async (kind: DevObjectKind, name: string) => {
    if (kind === 'Deployment') await client.apps.readNamespacedDeployment({ name, namespace });
    else if (kind === 'Secret') await client.core.readNamespacedSecret({ name, namespace });
    else await client.core.readNamespacedPersistentVolumeClaim({ name, namespace });
  };
  return {
    findOriginal: (devName, dev) => findOriginal(client, devName, dev),
    readMirror: (name) => readMirror(client, name),
    restoreOriginal: (original, rec) => restoreOriginal(client, original, rec),
    exists: async (kind, name) => {
      try {
        await read(kind, name);
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
    delete: (kind, name) => deleteObject(client, { kind: DEV_OBJECT_KINDS[kind], name }),
    countDevPods: async (devName) => (await client.core.listNamespacedPod({ namespace, labelSelector: `${DEV_POD_LABEL}=${devName}` })).items.length,
  };
}

export interface DeactivateOptions {
  volumes: boolean;
  timeoutMs: number;
  step(message: string): void;
  warn(message: string): void;
  /** Ends what is left on this machine of the session of a folder that no longer exists. */
  takeOver(folder: string): Promise<void>;
}

/** Returns false when nothing of dev mode was found. */
export async function deactivate(api: DeactivateApi, t: DevTarget, o: DeactivateOptions): Promise<boolean> {
  const original = await api.findOriginal(t.devName, t.dev);
  // Without the original (deleted meanwhile) the mirror is still named after the dev name's default.
  const name = mirrorName(original?.metadata.name ?? t.devName);
  const rec = original ? recorded(original) : undefined;
  // Without an original, a standalone dev Deployment (autocreate) records whose it is on itself.
  const standalone = original ? undefined : await api.readMirror(name);
  const owner = original ?? (standalone ? { metadata: { annotations: standalone.metadata?.annotations ?? {} } } : undefined);
  const activeFrom = owner?.metadata.annotations?.[FOLDER_ANNOTATION];
  if (activeFrom && activeFrom !== t.folder) {
    const other = originOf(owner);
    if (!other.gone) {
      throw new DevtoolError(`${t.devName} was activated from ${other.where}: run 'devtool down' there (the folder where 'devtool up' ran)`);
    }
    // Nobody could ever run `down` there again: this folder takes over (its `up`, if alive, ends first).
    o.warn(`${t.devName} was activated from ${other.where}: taking it over from here`);
    await o.takeOver(other.localFolder);
  }
  let found = false;
  const restore = async () => {
    if (!original || !rec) return;
    if (rec.hash && rec.hash !== originalSpecHash(original)) {
      o.warn(
        `${kindWord(original.kind)} ${original.metadata.name} changed while in dev mode (redeployed?): ` +
          'its replicas are restored, the rest is left as it is now',
      );
    }
    await api.restoreOriginal(original, rec);
    o.step(`${kindWord(original.kind)} ${original.metadata.name} restored to ${rec.replicas} replica${rec.replicas === 1 ? '' : 's'}`);
    found = true;
  };
  // A StatefulSet's first pod gets the claims the dev pod used: it starts once the dev pod is gone,
  // so two pods never use the data at once. A Deployment is given back first (it serves sooner).
  const afterDevPod = original?.kind === 'StatefulSet';
  if (!afterDevPod) await restore();
  const removed = await remove(api, 'Deployment', name);
  if (removed && standalone?.metadata?.annotations?.[AUTOCREATED_ANNOTATION]) o.step(`standalone dev deployment ${name} deleted`);
  found = removed || found;
  found = (await remove(api, 'Secret', name)) || found;
  await pollUntil(o.timeoutMs, `the dev pods of ${name} to end`, async () => (await api.countDevPods(t.devName)) === 0);
  if (afterDevPod) await restore();
  if (o.volumes) {
    // The claim is only freed once no pod uses it: the delete is accepted at once and finishes then.
    if (await remove(api, 'PersistentVolumeClaim', name)) {
      await pollUntil(o.timeoutMs, `persistent volume claim ${name} to be deleted`, async () => !(await api.exists('PersistentVolumeClaim', name)));
      o.step(`persistent volume claim ${name} deleted`);
      found = true;
    }
  }
  return found;
}

async function remove(api: DeactivateApi, kind: DevObjectKind, name: string): Promise<boolean> {
  const present = await withRetry(() => api.exists(kind, name));
  if (present) await withRetry(() => api.delete(kind, name));
  return present;
}

/** Retries a call while the API server is briefly away (restarts are part of the fault tests). */
async function withRetry<T>(call: () => Promise<T>, attempts = 10): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await call();
    } catch (err) {
      if (i >= attempts || !isTransient(err)) throw err;
      await sleep(Math.min(500 * i, 3000));
    }
  }
}
