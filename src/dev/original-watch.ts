/**
 * While `up` runs, the dev container follows its original Deployment or StatefulSet (the States table: "a
 * watcher keeps the mirror definition up to date with the original"):
 *
 * - the original's pod template changes (`kubectl set env deployment/x`, a new image, a new
 *   ConfigMap reference): the mirror is rebuilt from the new original with `up`'s own inputs
 *   (activate.ts's `rebuild`, so the manifest's overrides still win) and replaced; the dev pod
 *   restarts with the new settings and the tunnel follows it;
 * - the original is redeployed (its replicas go above zero again, e.g. the user's deploy applied
 *   it with `replicas: 2`): the new count is recorded for `down` and the original is scaled back
 *   to zero; likewise when it was deleted and created anew, without devtool's annotations.
 *
 * It never fights `devtool down`: down's first step removes devtool's annotations from the
 * original (restoreOriginal), and from then on the watcher leaves it alone. Every write is
 * conditional on the resourceVersion the decision was made on (a 409 means "look again"), and the
 * mirror is only ever replaced, never created, so one deleted by `down` stays deleted.
 *
 * The watch is a client-node Watch on the one object (a name field selector), re-listed and
 * re-watched whenever it ends: the server's timeout, a 410 Gone, a dropped connection or an API
 * server restart, with a backoff while the API server is away.
 *
 * The watcher reaches the cluster only through DeploymentWatchApi (deploymentWatchApi(client, kind)
 * is the real one), so its decisions are unit-tested against an in-memory Deployment.
 */
import * as k8s from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import { isNotFound, isTransient, withTimeout, type KubeClient } from '../kube/client.ts';
import { describeKubeError } from '../kube/config.ts';
import type { Logger } from '../log/logger.ts';
import type { DevObjects } from './mirror.ts';
import { FOLDER_ANNOTATION, ORIGINAL_ANNOTATION, SPEC_HASH_ANNOTATION } from './names.ts';
import { asOriginal, recordAnnotations, recorded } from './original.ts';
import { kindWord, type OriginalKind, type OriginalObject } from './statefulset.ts';

/** The original as the API server gives it (a mirror is always a Deployment). */
type Workload = k8s.V1Deployment | k8s.V1StatefulSet;

/** The workload API the watcher uses, in the dev container's namespace, and nothing more. */
export interface DeploymentWatchApi {
  /** What the original is: list, watch, read and mergePatch are of this kind; readMirror and replace of Deployments. */
  readonly kind: OriginalKind;
  /** The originals named `name` (none or one), and the resourceVersion of the list to watch from. */
  list(name: string): Promise<{ items: Workload[]; resourceVersion?: string }>;
  /**
   * Watches the Deployment `name`: `event` for each change (ERROR carries a Status), then `done`
   * once, with the error or undefined when the server ended the watch. Resolves once the watch is
   * open, with how to end it.
   */
  watch(
    name: string,
    query: { resourceVersion?: string; timeoutSeconds: number },
    event: (type: string, object: Workload | k8s.V1Status) => void,
    done: (err: unknown) => void,
  ): Promise<{ abort(): void }>;
  /** The original. */
  read(name: string): Promise<Workload>;
  /** A JSON merge patch of the original. */
  mergePatch(name: string, body: object): Promise<unknown>;
  /** The mirror Deployment. */
  readMirror(name: string): Promise<k8s.V1Deployment>;
  /** A replace of the mirror: carries the body's resourceVersion, so a 409 if it changed, and never creates. */
  replace(name: string, body: k8s.V1Deployment): Promise<unknown>;
}

/** The DeploymentWatchApi of a client's namespace, for an original of this kind. */
export function deploymentWatchApi(client: KubeClient, kind: OriginalKind = 'Deployment'): DeploymentWatchApi {
  const namespace = client.namespace;
  const sts = kind === 'StatefulSet';
  const path = `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/${sts ? 'statefulsets' : 'deployments'}`;
  const asMergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  return {
    kind,
    list: async (name) => {
      const query = { namespace, fieldSelector: `metadata.name=${name}` };
      const list = sts ? await client.apps.listNamespacedStatefulSet(query) : await client.apps.listNamespacedDeployment(query);
      return { items: list.items, resourceVersion: list.metadata?.resourceVersion };
    },
    watch: (name, { resourceVersion, timeoutSeconds }, event, done) =>
      new k8s.Watch(client.kc).watch(
        path,
        { fieldSelector: `metadata.name=${name}`, allowWatchBookmarks: true, timeoutSeconds, ...(resourceVersion ? { resourceVersion } : {}) },
        event,
        done,
      ),
    read: (name) => (sts ? client.apps.readNamespacedStatefulSet({ name, namespace }) : client.apps.readNamespacedDeployment({ name, namespace })),
    mergePatch: (name, body) =>
      sts
        ? client.apps.patchNamespacedStatefulSet({ name, namespace, body }, asMergePatch)
        : client.apps.patchNamespacedDeployment({ name, namespace, body }, asMergePatch),
    readMirror: (name) => client.apps.readNamespacedDeployment({ name, namespace }),
    replace: (name, body) => client.apps.replaceNamespacedDeployment({ name, namespace, body }),
  };
}

export interface OriginalWatchOptions {
  deployments: DeploymentWatchApi;
  /** folderHash of the folder `up` runs from: what marks the original and the mirror as ours. */
  folder: string;
  /** The same folder in words (origin.ts), recorded with it. */
  origin: string;
  /** The objects `up` applied. */
  objects: DevObjects;
  /** The dev objects for another version of the original, from `up`'s inputs. */
  rebuild(original: OriginalObject): DevObjects;
  /** One-line notices for the user. */
  notice(message: string): void;
  log: Pick<Logger, 'debug'>;
  /** The wait before a re-list, doubled on each failure up to `max` (tests shorten it). */
  backoffMs?: { min: number; max: number };
}

/** The server ends a watch after this long; it is then re-listed and watched anew. */
const WATCH_SECONDS = 240;
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
const CONFLICT_RETRIES = 5;

export class OriginalWatch {
  private stopped = false;
  private abortWatch?: () => void;
  private sleeping?: { timer: NodeJS.Timeout; wake: () => void };
  private readonly name: string;
  private uid?: string;
  /** The spec hash of the mirror as last applied. */
  private applied: string | undefined;
  private pending?: { original: OriginalObject | undefined };
  /** "deployment" or "statefulset", for notices. */
  private readonly kind: string;
  private draining?: Promise<void>;
  private gone = false;
  private lastProblem = '';

  constructor(private readonly o: OriginalWatchOptions) {
    this.name = o.objects.deployment.metadata.annotations?.[ORIGINAL_ANNOTATION] ?? '';
    this.applied = o.objects.deployment.metadata.annotations?.[SPEC_HASH_ANNOTATION];
    this.kind = kindWord(o.deployments.kind);
    void this.loop();
  }

  /** Ends the watch and its timers (nothing is left to keep the process alive). */
  stop(): void {
    this.stopped = true;
    this.abortWatch?.();
    if (this.sleeping) {
      clearTimeout(this.sleeping.timer);
      this.sleeping.wake();
    }
  }

  private async loop(): Promise<void> {
    const { min, max } = this.o.backoffMs ?? { min: BACKOFF_MIN_MS, max: BACKOFF_MAX_MS };
    let delay = min;
    while (!this.stopped) {
      let healthy = false;
      try {
        const list = await withTimeout(this.o.deployments.list(this.name), 30_000, `reading ${this.kind} ${this.name}`);
        this.enqueue(list.items[0] ? this.asObject(list.items[0]) : undefined);
        healthy = await this.watchFrom(list.resourceVersion);
      } catch (err) {
        this.o.log.debug(`original watch of ${this.name}: ${describeKubeError(err)}`);
      }
      // A watch the server ended (its timeout, a 410) is re-listed at once; failures (API server
      // away) back off. The re-list catches up on anything missed meanwhile either way.
      delay = healthy ? min : Math.min(delay * 2, max);
      if (!this.stopped) {
        await new Promise<void>((wake) => (this.sleeping = { timer: setTimeout(wake, delay), wake }));
        this.sleeping = undefined;
      }
    }
  }

  /** Resolves when the watch ends: true when the server ended it, false on a failure. */
  private watchFrom(resourceVersion: string | undefined): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let controller: { abort(): void } | undefined;
      let ended = false;
      const end = (why: string, healthy = false) => {
        if (ended) return;
        ended = true;
        clearTimeout(watchdog);
        this.o.log.debug(`original watch of ${this.name} ended: ${why}`);
        controller?.abort();
        resolve(healthy);
      };
      // A connection that died without a word (no RST) would leave the watch silent forever.
      const watchdog = setTimeout(() => end('no end from the server in time'), (WATCH_SECONDS + 30) * 1000);
      this.abortWatch = () => end('stopped');
      this.o.deployments
        .watch(
          this.name,
          { ...(resourceVersion ? { resourceVersion } : {}), timeoutSeconds: WATCH_SECONDS },
          (type: string, object: Workload | k8s.V1Status) => {
            // ERROR carries a Status, typically 410 Gone (the resourceVersion is too old): re-list.
            if (type === 'ERROR')
              return end(
                `error event: ${(object as k8s.V1Status).code ?? ''} ${(object as k8s.V1Status).message ?? ''}`,
                (object as k8s.V1Status).code === 410,
              );
            if (type === 'BOOKMARK') return;
            this.enqueue(type === 'DELETED' ? undefined : this.asObject(object as Workload));
          },
          (err: unknown) => end(err ? describeKubeError(err) : 'closed by the server', !err),
        )
        .then(
          (c) => {
            controller = c;
            if (ended) c.abort();
          },
          (err: unknown) => end(describeKubeError(err)),
        );
    });
  }

  /** Only the latest state matters: states that arrive while one is handled are coalesced. */
  private enqueue(original: OriginalObject | undefined): void {
    this.pending = { original };
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  private async drain(): Promise<void> {
    while (this.pending && !this.stopped) {
      const { original } = this.pending;
      this.pending = undefined;
      try {
        await this.follow(original);
        this.lastProblem = '';
      } catch (err) {
        const message = err instanceof DevtoolError ? err.message : describeKubeError(err);
        this.o.log.debug(`original watch of ${this.name}: ${message}`);
        // Transient ones are retried by the next re-list; say anything else once.
        if (!isTransient(err) && message !== this.lastProblem) this.o.notice(`cannot follow a change of ${this.kind} ${this.name}: ${message}`);
        this.lastProblem = message;
      }
    }
  }

  /** Brings the original and the mirror in line with one observed state of the original. */
  private async follow(observed: OriginalObject | undefined): Promise<void> {
    let original = observed;
    for (let attempt = 1; ; attempt++) {
      if (!original) {
        if (!this.gone) this.o.notice(`${this.kind} ${this.name} was deleted; the dev container keeps running and is reactivated if it comes back`);
        this.gone = true;
        return;
      }
      this.gone = false;
      try {
        if (!(await this.reactivate(original))) return;
        break;
      } catch (err) {
        if ((err as { code?: number }).code !== 409 || attempt >= CONFLICT_RETRIES) throw err;
        // Changed since we looked (maybe by `down`): look again.
        original = await this.read();
      }
    }
    await this.updateMirror(original);
  }

  /**
   * Scales a redeployed original back to zero, recording its new replicas for `down`. Returns false
   * when the original is not ours to touch (restored by `down`, or taken over from elsewhere).
   */
  private async reactivate(original: OriginalObject): Promise<boolean> {
    const annotations = original.metadata.annotations ?? {};
    this.uid ??= original.metadata.uid;
    const ours = annotations[FOLDER_ANNOTATION] === this.o.folder && recorded(original) !== undefined;
    // Deleted and created anew (a new UID) loses devtool's annotations; `down` keeps the UID.
    const recreated = original.metadata.uid !== this.uid && !annotations[FOLDER_ANNOTATION] && !recorded(original);
    if (!ours && !recreated) {
      this.o.log.debug(`original watch: ${this.kind} ${this.name} is no longer marked for this folder ('devtool down' restored it?); leaving it alone`);
      return false;
    }
    const replicas = original.spec?.replicas ?? 1;
    if (replicas === 0 && ours) return true;
    await this.o.deployments.mergePatch(this.name, {
      // A precondition: the write fails with 409 if anyone (`down`) changed the original since.
      metadata: { resourceVersion: original.metadata.resourceVersion, annotations: recordAnnotations(this.o, original) },
      spec: { replicas: 0 },
    });
    this.uid = original.metadata.uid;
    this.o.notice(
      `${this.kind} ${this.name} was ${recreated ? 'recreated' : 'redeployed'} with ${replicas} replica${replicas === 1 ? '' : 's'}: scaled back to ` +
        `0 while the dev container is active ('devtool down' restores ${replicas})`,
    );
    return true;
  }

  /** Replaces the mirror when the original's pod template changed; never creates it. */
  private async updateMirror(original: OriginalObject): Promise<void> {
    const next = this.o.rebuild(original).deployment;
    const hash = next.metadata.annotations?.[SPEC_HASH_ANNOTATION];
    if (hash === this.applied) return;
    const name = next.metadata.name;
    for (let attempt = 1; ; attempt++) {
      let live: k8s.V1Deployment;
      try {
        live = await this.o.deployments.readMirror(name);
      } catch (err) {
        if (isNotFound(err)) return; // removed by `down`: it stays removed
        throw err;
      }
      if (live.metadata?.annotations?.[FOLDER_ANNOTATION] !== this.o.folder) return;
      const body: k8s.V1Deployment = {
        ...live,
        metadata: { ...live.metadata, labels: next.metadata.labels, annotations: { ...live.metadata.annotations, ...next.metadata.annotations } },
        spec: next.spec,
      };
      try {
        // A replace carries the resourceVersion just read: a 409 if it changed, never a create.
        await this.o.deployments.replace(name, body);
        break;
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404) return;
        if (code !== 409 || attempt >= CONFLICT_RETRIES) throw err;
      }
    }
    this.applied = hash;
    this.o.notice(`${this.kind} ${this.name} changed: dev container ${name} updated to match (its pod restarts with the new settings)`);
  }

  private asObject(d: Workload): OriginalObject {
    return asOriginal(this.o.deployments.kind, d);
  }

  private async read(): Promise<OriginalObject | undefined> {
    try {
      return this.asObject(await this.o.deployments.read(this.name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/** Starts following the original (of this kind) of an activated dev container; `stop()` it when `up` ends. */
export function watchOriginal({ client, kind, ...o }: Omit<OriginalWatchOptions, 'deployments'> & { client: KubeClient; kind: OriginalKind }): OriginalWatch {
  return new OriginalWatch({ ...o, deployments: deploymentWatchApi(client, kind) });
}
