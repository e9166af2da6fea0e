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
import { deleteEnvironment, type EnvironmentRecord, readEnvironment, writeEnvironment } from './state.ts';

/**
 * What destroy asks of the environment's namespace, and nothing more, so a test drives it with an
 * in-memory fake; `destroyApi` is the real one.
 */
export interface DestroyApi {
  /** The environment's record (state.ts), if there is one. */
  readRecord(environment: string): Promise<EnvironmentRecord | undefined>;
  writeRecord(record: EnvironmentRecord): Promise<void>;
  /** Deletes the record and its variables; one already gone is fine. */
  deleteRecord(environment: string): Promise<void>;
  /** The objects of every kind the cluster serves that `labelSelector` selects (kube/apply.ts). */
  listByLabel(labelSelector: string): Promise<LabeledObject[]>;
  /** Deletes an object, its dependents in the background; one already gone is fine. */
  delete(o: LabeledObject): Promise<void>;
}

/** The DestroyApi of a client's namespace. */
export function destroyApi(client: KubeClient): DestroyApi {
  return {
    readRecord: (environment) => readEnvironment(client, environment),
    writeRecord: (record) => writeEnvironment(client, record),
    deleteRecord: (environment) => deleteEnvironment(client, environment),
    listByLabel: (labelSelector) => listByLabel(client, labelSelector),
    delete: (o) => deleteObject(client, o),
  };
}

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

export async function destroyEnvironment(api: DestroyApi, opts: DestroyOptions, progress: Progress, now: () => Date): Promise<DestroyResult> {
  const record = await api.readRecord(opts.environment);
  if (record) await api.writeRecord({ ...record, status: 'destroying', updated: now().toISOString() });

  const objects = (await api.listByLabel(environmentSelector(opts.environment))).sort((a, b) => rank(a) - rank(b));
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
    await api.delete(o);
    deleted.push(`${o.kind.kind}/${o.name}`);
    progress.step(`deleted ${o.kind.kind}/${o.name}`);
  }
  if (opts.wait) await awaitGone(api, opts, progress);
  await api.deleteRecord(opts.environment);
  return { deleted, keptVolumes, found: Boolean(record) || objects.length > 0 };
}

/** The first five, enough to see what holds a destroy up. */
const names = (objects: readonly LabeledObject[]) =>
  objects
    .slice(0, 5)
    .map((o) => `${o.kind.kind}/${o.name}`)
    .join(', ');

async function awaitGone(api: DestroyApi, opts: DestroyOptions, progress: Progress): Promise<void> {
  let left: LabeledObject[] = [];
  const gone = async () => {
    left = (await api.listByLabel(environmentSelector(opts.environment))).filter((o) => opts.volumes || o.kind.kind !== 'PersistentVolumeClaim');
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
