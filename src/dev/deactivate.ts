/**
 * `down`: gives the original (Deployment or StatefulSet) back exactly as `up` found it (its recorded replicas; devtool's
 * annotations removed), deletes the mirror and its Secret, waits for the dev pods to end and, with
 * --volumes, deletes the claim. Everything it needs is on the cluster, so it works after `up` was
 * killed. Re-running it is harmless. A dev container activated from a folder of this machine that
 * no longer exists (deleted, moved) is taken over: nobody could end it from there.
 */
import { DevtoolError } from '../base/errors.ts';
import { deleteObject } from '../kube/apply.ts';
import { isNotFound, isTransient, type KubeClient } from '../kube/client.ts';
import { pollUntil } from '../kube/poll.ts';
import { DEV_POD_LABEL, FOLDER_ANNOTATION, mirrorName } from './names.ts';
import { originOf } from './origin.ts';
import { findOriginal, originalSpecHash, recorded, restoreOriginal } from './original.ts';
import { readMirror } from './activate.ts';
import { AUTOCREATED_ANNOTATION } from './standalone.ts';
import type { DevTarget } from './target.ts';
import { sleep } from '../base/wait.ts';
import { kindWord } from './statefulset.ts';

export interface DeactivateOptions {
  volumes: boolean;
  timeoutMs: number;
  step(message: string): void;
  warn(message: string): void;
  /** Ends what is left on this machine of the session of a folder that no longer exists. */
  takeOver(folder: string): Promise<void>;
}

/** Returns false when nothing of dev mode was found. */
export async function deactivate(client: KubeClient, t: DevTarget, o: DeactivateOptions): Promise<boolean> {
  const original = await findOriginal(client, t.devName, t.dev);
  // Without the original (deleted meanwhile) the mirror is still named after the dev name's default.
  const name = mirrorName(original?.metadata.name ?? t.devName);
  const rec = original ? recorded(original) : undefined;
  // Without an original, a standalone dev Deployment (autocreate) records whose it is on itself.
  const standalone = original ? undefined : await readMirror(client, name);
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
    await restoreOriginal(client, original, rec);
    o.step(`${kindWord(original.kind)} ${original.metadata.name} restored to ${rec.replicas} replica${rec.replicas === 1 ? '' : 's'}`);
    found = true;
  };
  // A StatefulSet's first pod gets the claims the dev pod used: it starts once the dev pod is gone,
  // so two pods never use the data at once. A Deployment is given back first (it serves sooner).
  const afterDevPod = original?.kind === 'StatefulSet';
  if (!afterDevPod) await restore();
  const removed = await remove(client, 'apps/v1', 'Deployment', 'deployments', name);
  if (removed && standalone?.metadata?.annotations?.[AUTOCREATED_ANNOTATION]) o.step(`standalone dev deployment ${name} deleted`);
  found = removed || found;
  found = (await remove(client, 'v1', 'Secret', 'secrets', name)) || found;
  await pollUntil(
    o.timeoutMs,
    `the dev pods of ${name} to end`,
    async () => (await client.core.listNamespacedPod({ namespace: client.namespace, labelSelector: `${DEV_POD_LABEL}=${t.devName}` })).items.length === 0,
  );
  if (afterDevPod) await restore();
  if (o.volumes) {
    // The claim is only freed once no pod uses it: the delete is accepted at once and finishes then.
    if (await remove(client, 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', name)) {
      await pollUntil(o.timeoutMs, `persistent volume claim ${name} to be deleted`, async () => !(await exists(client, name)));
      o.step(`persistent volume claim ${name} deleted`);
      found = true;
    }
  }
  return found;
}

async function remove(client: KubeClient, apiVersion: string, kind: string, resource: string, name: string): Promise<boolean> {
  const present = await withRetry(async () => {
    try {
      if (kind === 'Deployment') await client.apps.readNamespacedDeployment({ name, namespace: client.namespace });
      else if (kind === 'Secret') await client.core.readNamespacedSecret({ name, namespace: client.namespace });
      else await client.core.readNamespacedPersistentVolumeClaim({ name, namespace: client.namespace });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  });
  if (present) await withRetry(() => deleteObject(client, { kind: { apiVersion, kind, resource }, name }));
  return present;
}

async function exists(client: KubeClient, claim: string): Promise<boolean> {
  try {
    await client.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: client.namespace });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
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
