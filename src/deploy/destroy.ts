/**
 * `destroy`: removes every object carrying the environment's label, of every kind the cluster
 * serves (found through discovery, so objects made by kubectl or helm in deploy commands go too).
 * Persistent volume claims are kept unless asked: data is never deleted by default.
 */
import { waitUntil } from '../base/wait.ts';
import { formatDuration } from '../base/duration.ts';
import { DevtoolError } from '../base/errors.ts';
import { deleteObject, listByLabel, type LabeledObject } from '../kube/apply.ts';
import type { KubeClient } from '../kube/client.ts';
import { environmentSelector } from '../kube/labels.ts';
import type { Progress } from './progress.ts';
import { deleteEnvironment, readEnvironment, writeEnvironment } from './state.ts';

export interface DestroyOptions {
  environment: string;
  volumes: boolean;
  wait: boolean;
  timeoutMs: number;
}

export interface DestroyResult {
  deleted: string[];
  keptVolumes: string[];
  /** False when there was neither a record nor any object of the environment. */
  found: boolean;
}

/** Workloads go first so their pods stop using what follows; claims last, after the pods are gone. */
const ORDER = ['Ingress', 'Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicaSet', 'Pod', 'Service'];
const rank = (o: LabeledObject) => (o.kind.kind === 'PersistentVolumeClaim' ? 1000 : ORDER.indexOf(o.kind.kind) === -1 ? 100 : ORDER.indexOf(o.kind.kind));

export async function destroyEnvironment(client: KubeClient, opts: DestroyOptions, progress: Progress, now: () => Date): Promise<DestroyResult> {
  const record = await readEnvironment(client, opts.environment);
  if (record) await writeEnvironment(client, { ...record, status: 'destroying', updated: now().toISOString() });

  const objects = (await listByLabel(client, environmentSelector(opts.environment))).sort((a, b) => rank(a) - rank(b));
  const deleted: string[] = [];
  const keptVolumes: string[] = [];
  for (const o of objects) {
    // Its owner's deletion takes it (background propagation): deleting it too is redundant, and
    // not always allowed (the built-in admin role may not delete a StatefulSet's ControllerRevisions).
    if (o.owned) continue;
    if (o.kind.kind === 'PersistentVolumeClaim' && !opts.volumes) {
      keptVolumes.push(o.name);
      continue;
    }
    await deleteObject(client, o);
    deleted.push(`${o.kind.kind}/${o.name}`);
    progress.step(`deleted ${o.kind.kind}/${o.name}`);
  }
  if (opts.wait) await awaitGone(client, opts, progress);
  await deleteEnvironment(client, opts.environment);
  return { deleted, keptVolumes, found: Boolean(record) || objects.length > 0 };
}

/** The first five, enough to see what holds a destroy up. */
const names = (objects: readonly LabeledObject[]) =>
  objects
    .slice(0, 5)
    .map((o) => `${o.kind.kind}/${o.name}`)
    .join(', ');

async function awaitGone(client: KubeClient, opts: DestroyOptions, progress: Progress): Promise<void> {
  let left: LabeledObject[] = [];
  const gone = async () => {
    left = (await listByLabel(client, environmentSelector(opts.environment))).filter((o) => opts.volumes || o.kind.kind !== 'PersistentVolumeClaim');
    return left.length === 0;
  };
  const what = () => (left.length === 0 ? '' : `${left.length} object${left.length === 1 ? '' : 's'} to go: ${names(left)}`);
  const wait = waitUntil(gone, {
    timeoutMs: opts.timeoutMs,
    intervalMs: 1000,
    timedOut: () => new DevtoolError(`timed out after ${formatDuration(opts.timeoutMs)} waiting for ${left.length} objects to go: ${names(left)}`),
  });
  await progress.waiting(what, wait);
  progress.done('every object is gone');
}
