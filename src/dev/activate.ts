/**
 * `up`'s switch to dev mode (the States table): record and scale the original to zero, apply the
 * Secret, claim and mirror, and wait for the dev pod. Safe to re-run: a second `up` from the same
 * folder re-applies the same objects (nothing rolls unless the dev spec changed).
 */
import { waitUntil } from '../base/wait.ts';
import { DevtoolError } from '../base/errors.ts';
import { formatDuration } from '../base/duration.ts';
import { applyObject } from '../kube/apply.ts';
import { isNotFound, isTransient, type KubeClient } from '../kube/client.ts';
import { Watch, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { claimProblem } from '../kube/claims.ts';
import { MountRetry } from '../kube/mount-retry.ts';
import { POLL_MS, pollUntil } from '../kube/poll.ts';
import { podPortGreeting } from '../kube/port-check.ts';
import { labelSelectorString, workloadState } from '../kube/workloads.ts';
import { namespaceLimitsApi } from '../kube/namespace-limits-api.ts';
import { AgentAnswer, agentCandidate } from './agent-answer.ts';
import { agentKeptOnClaim, agentMissing, recordAgentOnClaim } from './agent-cache.ts';
import { agentArch, agentImagePullError } from './agent-delivery.ts';
import { readNodeArch, type AgentCopies } from './agent-inject.ts';
import { AGENT_SSH_PORT, buildDevObjects, copiesAgent, devContainerName, type DevObjects } from './mirror.ts';
import { checkDevPodLimits } from './quota-check.ts';
import { devVersionRule } from './dev-version.ts';
import {
  AGENT_UNPULLED_ANNOTATION,
  DEV_POD_LABEL,
  DEV_VERSION_ANNOTATION,
  FOLDER_ANNOTATION,
  mirrorName,
  ofSpec,
  ORIGIN_ANNOTATION,
  SPEC_HASH_ANNOTATION,
} from './names.ts';
import { originOf } from './origin.ts';
import { type PodWatchApi, watchPodStart } from './pod-start.ts';
import { checkPodSecurity } from './pod-security.ts';
import { findOriginal, notFoundMessage, recordAndScaleDown } from './original.ts';
import { AUTOCREATED_ANNOTATION, standaloneOriginal } from './standalone.ts';
import type { DevTarget } from './target.ts';
import { checkDevelopable, kindWord, type OriginalKind, type OriginalObject } from './statefulset.ts';
import { takeOverFirstPodClaims } from './statefulset-claims.ts';
import { markedUnwritable, markUnwritable, stateUnwritable, unwritableNotice } from './unwritable-claim.ts';

export interface ActivateOptions {
  /** This CLI's version, recorded on the dev Deployment; another version's dev container is replaced or refused (dev-version.ts). */
  devtoolVersion: string;
  extraEnv: Record<string, string>;
  /** The devtool-bin image; undefined: none is known, the agent is copied in through the API (agent-inject.ts). */
  agentImage: string | undefined;
  /** Copies the agent into dev pods that wait for it (also used when agentImage cannot be pulled). */
  agentCopies: AgentCopies;
  /**
   * When agentImage is the context registry's: pushes a devtool-bin image for the node's
   * architecture there if the registry has none, and resolves with the image (by digest) to run
   * (agent-image.ts); undefined when the registry has one the cluster still cannot pull.
   */
  pushAgentImage?(arch: string): Promise<string | undefined>;
  hostPrivateKey: string;
  clientPublicKey: string;
  /** The agent's Syncthing settings; absent when the dev container syncs no folder. */
  syncthing?: Record<string, unknown>;
  timeoutMs: number;
  /** Ends the wait for the dev pod, `podReady`'s too: the caller gave up (its session closed). */
  signal?: AbortSignal;
  step(message: string): void;
  /** A line the user must read: what `up` gave up to go on (progress.warn). */
  notice(message: string): void;
  /** Detail for devtool.log only (each step of the dev pod's start). */
  log(line: string): void;
  /**
   * The image of a standalone dev container (standalone.ts), asked only when there is no original
   * to swap and the services entry says `autocreate: true`.
   */
  standaloneImage(): Promise<string>;
}

export interface Activated {
  objects: DevObjects;
  /** The dev pod: ready, or its agent answering (agent-answer.ts). */
  pod: string;
  /**
   * Resolves once the API server says the pod is ready: at once, or up to a second after its agent
   * answered (the kubelet's next look); rejects when the pod fails meanwhile.
   */
  podReady: Promise<void>;
  /** No original: `up` created a standalone dev Deployment (autocreate), which nothing follows. */
  standalone: boolean;
  /** What the original is (what the original watch follows). */
  kind: OriginalKind;
  /** The dev objects for a changed original, from the same inputs (original-watch.ts keeps the mirror in step). */
  rebuild(original: OriginalObject): DevObjects;
}

export async function activate(client: KubeClient, t: DevTarget, o: ActivateOptions): Promise<Activated> {
  // The applies below would each wait for their API version's discovery first: read it meanwhile.
  void Promise.all([client.objects.discover('v1', 'Secret'), client.objects.discover('apps/v1', 'Deployment')]).catch(() => undefined);
  const limitsApi = namespaceLimitsApi(client, o.log);
  const limitsRead = limitsApi.limits();
  const found = await findOriginal(client, t.devName, t.dev);
  if (!found && !t.dev.autocreate) throw new DevtoolError(notFoundMessage(t.devName, t.dev, t.namespace));
  const name = mirrorName(found?.metadata.name ?? t.devName);
  // Whose dev container: recorded on the original, or, for a standalone one, on its own Deployment.
  let mirrorRead: Promise<V1Deployment | undefined> | undefined;
  const mirrorOnce = () => (mirrorRead ??= readMirror(client, name));
  const mirror = found?.metadata.annotations?.[FOLDER_ANNOTATION] ? undefined : await mirrorOnce();
  const owner = mirror ? asOwner(mirror) : found;
  const activeFrom = owner?.metadata.annotations?.[FOLDER_ANNOTATION];
  if (activeFrom && activeFrom !== t.folder) {
    const other = originOf(owner);
    const next = other.gone ? `run 'devtool down' here to take it over` : `run 'devtool down' there first`;
    throw new DevtoolError(`${t.devName} is already in development from ${other.where} (deployment ${name} in namespace ${t.namespace}); ${next}`);
  }
  if (activeFrom) {
    // Active from this folder: its dev pod runs the agent of the version whose `up` made it.
    const existing = await mirrorOnce();
    const rule = existing ? devVersionRule(t.devName, existing.metadata?.annotations?.[DEV_VERSION_ANNOTATION], o.devtoolVersion) : { kind: 'same' as const };
    if (rule.kind === 'refuse') throw new DevtoolError(rule.error);
    if (rule.kind === 'replace') o.step(rule.step);
  }
  if (found?.kind === 'StatefulSet') checkDevelopable(found);
  const original: OriginalObject = found ?? standaloneOriginal(t.devName, t.dev.image ?? keptImage(mirror) ?? (await o.standaloneImage()));
  let agentImage = o.agentImage;
  // An image this dev container could not pull before is not tried again until `down`: each try rolls the dev pod.
  let unpulledImage: string | undefined;
  if (agentImage !== undefined && (await mirrorOnce())?.metadata?.annotations?.[AGENT_UNPULLED_ANNOTATION] === agentImage) {
    o.log(`the agent image ${agentImage} could not be pulled for this dev container before: its agent is copied in through the Kubernetes API`);
    unpulledImage = agentImage;
    agentImage = undefined;
  }
  // The claim shares the mirror's name (mirror.ts). One an earlier dev pod could not write is not tried again until `down --volumes`.
  const marked = t.dev.persistentVolume.enabled ? await markedUnwritable(client, name) : undefined;
  const fromCompose = t.deploy.source.kind === 'compose';
  if (marked) o.notice(unwritableNotice(t.devName, marked, fromCompose));
  let claimUnwritable = marked !== undefined;
  let agentOnClaim =
    agentImage !== undefined && t.dev.persistentVolume.enabled && !claimUnwritable && (await agentKeptOnClaim(client, name, agentImage, mirrorOnce));
  const namespaceLimits = await limitsRead;
  const rebuild = (from: OriginalObject) => {
    const objects = buildDevObjects({
      original: from,
      devName: t.devName,
      dev: t.dev,
      environment: t.deploy.environment,
      extraEnv: o.extraEnv,
      agentImage,
      folder: t.folder,
      devtoolVersion: o.devtoolVersion,
      hostPrivateKey: o.hostPrivateKey,
      clientPublicKey: o.clientPublicKey,
      syncthing: o.syncthing,
      agentOnClaim,
      namespaceLimits,
      claimUnwritable,
    });
    if (unpulledImage !== undefined)
      objects.deployment.metadata.annotations = { ...objects.deployment.metadata.annotations, [AGENT_UNPULLED_ANNOTATION]: unpulledImage };
    if (!found) {
      // The folder in words too: another folder's `up` or `down` names it (there is no original to carry it).
      objects.deployment.metadata.annotations = { ...objects.deployment.metadata.annotations, [AUTOCREATED_ANNOTATION]: 'true', [ORIGIN_ANNOTATION]: t.origin };
    }
    return objects;
  };
  let objects = rebuild(original);
  // Before anything changes: a dev pod the namespace's Pod Security policy refuses leaves the original as it was.
  await checkPodSecurity(client, { devName: t.devName, dev: t.dev, mirror: objects.deployment, original: found });
  // Likewise a dev pod or claim the namespace's quotas or LimitRanges refuse, or have no room for once the swap frees the original's pods.
  await checkDevPodLimits(limitsApi, namespaceLimits, {
    devName: t.devName,
    namespace: t.namespace,
    objects,
    devContainer: devContainerName(objects.deployment.spec?.template ?? {}),
    replacedPods: found ? labelSelectorString(found.spec?.selector) : `${DEV_POD_LABEL}=${t.devName}`,
    source: t.deploy.source.kind,
    ...(found ? { original: `${kindWord(found.kind)} ${found.metadata.name}` } : {}),
  });
  await tryWrites(client, objects, found ? `${kindWord(original.kind)} ${original.metadata.name} was not scaled down` : 'nothing was created');
  if (found) {
    o.step(`scaling ${kindWord(original.kind)} ${original.metadata.name} to 0 (its replicas are recorded for 'devtool down')`);
    await recordAndScaleDown(client, original, t);
    if (original.kind === 'StatefulSet') await takeOverFirstPodClaims(client, original, { timeoutMs: o.timeoutMs, step: o.step });
  } else {
    o.step(
      `no deployment ${t.devName} to swap in namespace ${t.namespace}: creating the standalone dev deployment ${objects.deployment.metadata.name} (autocreate)`,
    );
  }
  await Promise.all([applyObject(client, objects.secret), objects.claim && applyObject(client, objects.claim)]);
  await applyObject(client, objects.deployment);
  o.step(`starting dev container ${objects.deployment.metadata.name}`);
  /** Once: a push to the context's registry for the architecture of the pod's node, when the Node can be read. */
  const push = o.pushAgentImage;
  let pushOnce: ((pod: string) => Promise<string | undefined>) | undefined = push
    ? async (pod) => {
        const arch = agentArch(await readNodeArch(client, (await client.core.readNamespacedPod({ name: pod, namespace: client.namespace })).spec?.nodeName));
        if (!arch) return undefined;
        return push(arch).catch((e: unknown) => {
          o.log(`cannot push the agent image: ${(e as Error).message}`);
          return undefined;
        });
      }
    : undefined;
  let started: DevPodStart | undefined;
  while (!started) {
    try {
      started = await waitForDevPod(client, t.devName, objects, { ...o, agentOnClaim, agentImage });
    } catch (err) {
      if (err instanceof AgentMissingError) {
        o.log(`${err.message}: the init container copies it again`);
        agentOnClaim = false;
      } else if (err instanceof ClaimUnwritableError) {
        o.notice(unwritableNotice(t.devName, await markUnwritable(client, err.claim), fromCompose));
        claimUnwritable = true;
        agentOnClaim = false;
      } else if (err instanceof AgentImageUnpulledError && agentImage !== undefined) {
        const pushed = pushOnce ? await pushOnce(err.pod) : undefined;
        pushOnce = undefined;
        if (pushed) {
          o.step(`the registry had no agent image ${agentImage}: pushed ${pushed} (made from this devtool install)`);
          agentImage = pushed;
        } else {
          o.step(`the agent image ${agentImage} cannot be pulled (${err.reason}): copying the agent in through the Kubernetes API instead`);
          unpulledImage = agentImage;
          agentImage = undefined;
        }
        agentOnClaim = false;
      } else throw err;
      objects = rebuild(original);
      await applyObject(client, objects.deployment);
      // The failed pod's status would fail the next wait at once; Recreate removes it first anyway.
      await pollUntil(o.timeoutMs, `dev pod ${err.pod} to be replaced`, async () => {
        const pods = await devPods(client, t.devName);
        return !pods.some((p) => p.metadata?.name === err.pod);
      });
    }
  }
  if (objects.claim && agentImage !== undefined && copiesAgent(objects.deployment)) {
    // Only a speed-up for the next dev pod: a refusal (RBAC without patch on claims) costs nothing else.
    await recordAgentOnClaim(client, objects.claim.metadata.name, agentImage).catch((e: unknown) =>
      o.log(`cannot record the agent on claim ${objects.claim?.metadata.name}: ${(e as Error).message}`),
    );
  }
  return { objects, pod: started.pod, podReady: started.ready, rebuild, standalone: !found, kind: original.kind };
}

/**
 * What the swap then writes, tried first as a dry run: it meets the same rights, admission (quotas,
 * limit ranges, webhooks) and validation, so a refusal leaves the original running.
 */
async function tryWrites(client: KubeClient, objects: DevObjects, untouched: string): Promise<void> {
  const writes = [objects.secret, objects.claim, objects.deployment].filter((o) => o !== undefined);
  try {
    await Promise.all(writes.map((o) => applyObject(client, o, { dryRun: true })));
  } catch (err) {
    if (!(err instanceof DevtoolError)) throw err;
    throw new DevtoolError(`${err.message} (tried before the swap: ${untouched})`, err.exitCode);
  }
}

/** The kubelet cannot pull the agent's image for the dev pod (agent-delivery.ts). */
class AgentImageUnpulledError extends Error {
  constructor(
    readonly pod: string,
    readonly reason: string,
  ) {
    super(`dev pod ${pod} cannot pull the agent image (${reason})`);
  }
}

/** The dev pod's agent cannot write its state folder on the claim (unwritable-claim.ts). */
class ClaimUnwritableError extends Error {
  constructor(
    readonly pod: string,
    readonly claim: string,
  ) {
    super(`dev pod ${pod} cannot write its state folder on claim ${claim}`);
  }
}

/** The dev pod cannot exec the agent its claim was recorded to hold (agent-cache.ts). */
class AgentMissingError extends Error {
  constructor(
    readonly pod: string,
    claim: string,
  ) {
    super(`dev pod ${pod} finds no agent on claim ${claim}`);
  }
}

/**
 * The image a standalone dev container of this folder already runs: kept by the next `up`, so that
 * a source change (which changes the build's content tag) neither rebuilds the image nor restarts
 * the pod; the sync brings the sources. `down` then `up` takes the manifest's image anew.
 */
function keptImage(mirror: V1Deployment | undefined): string | undefined {
  if (!mirror?.metadata?.annotations?.[AUTOCREATED_ANNOTATION]) return undefined;
  return mirror.spec?.template.spec?.containers[0]?.image;
}

function asOwner(d: V1Deployment | undefined): { metadata: { annotations?: Record<string, string> } } | undefined {
  return d ? { metadata: { annotations: d.metadata?.annotations ?? {} } } : undefined;
}

/** The dev Deployment (a mirror or a standalone one), if there is one. */
export async function readMirror(client: KubeClient, name: string): Promise<V1Deployment | undefined> {
  try {
    return await client.apps.readNamespacedDeployment({ name, namespace: client.namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The name of the running, ready dev pod of a dev container, if there is one. */
export async function readyDevPod(client: KubeClient, devName: string, specHash?: string): Promise<string | undefined> {
  return (await readyDevPodObject(client, devName, specHash))?.metadata?.name;
}

/** The running, ready dev pod of a dev container, if there is one. */
export async function readyDevPodObject(client: KubeClient, devName: string, specHash?: string): Promise<V1Pod | undefined> {
  return (await devPods(client, devName)).find((p) => isReadyDevPod(p, specHash));
}

/** The dev container's pods, whatever their state. */
export async function devPods(client: KubeClient, devName: string): Promise<V1Pod[]> {
  return (await client.core.listNamespacedPod({ namespace: client.namespace, labelSelector: `${DEV_POD_LABEL}=${devName}` })).items;
}

function isReadyDevPod(p: V1Pod, specHash: string | undefined): boolean {
  return !p.metadata?.deletionTimestamp && p.status?.phase === 'Running' && ofSpec(p, specHash) && (p.status.containerStatuses ?? []).every((c) => c.ready);
}

function devWorkload(devName: string, objects: DevObjects) {
  return { kind: 'Deployment' as const, name: objects.deployment.metadata.name, podSelector: `${DEV_POD_LABEL}=${devName}` };
}

function failedMessage(name: string, state: { reason: string; logTail?: string }): string {
  return `dev container ${name} failed: ${state.reason}${state.logTail ? ` (last log line: ${state.logTail.split('\n').at(-1)})` : ''}`;
}

/**
 * Why the dev pod fails, in the words of the wait for it, if it does. A container that exits at once
 * is Running, so ready, for a moment between its restarts: `up` may have taken that moment for
 * ready, and asks this when it then cannot reach the agent.
 */
export async function devPodFailure(client: KubeClient, devName: string, objects: DevObjects): Promise<string | undefined> {
  const ref = devWorkload(devName, objects);
  const state = await workloadState(client, ref);
  return state.state === 'failed' ? failedMessage(ref.name, state) : undefined;
}

/** A dev pod that has started: the API server says it is ready, or will (`ready`) now that its agent answers. */
interface DevPodStart {
  pod: string;
  ready: Promise<void>;
}

/**
 * Waits for the dev pod of this spec, failing early with the reason a `kubectl describe` would
 * show. Returns as soon as the API server says it is ready or its agent answers, whichever is first
 * (agent-answer.ts); in the second case `ready` goes on waiting for the API server.
 */
async function waitForDevPod(
  client: KubeClient,
  devName: string,
  objects: DevObjects,
  o: Pick<ActivateOptions, 'timeoutMs' | 'log' | 'signal' | 'agentImage' | 'agentCopies'> & { agentOnClaim?: boolean },
): Promise<DevPodStart> {
  const { timeoutMs } = o;
  const specHash = objects.deployment.metadata.annotations?.[SPEC_HASH_ANNOTATION];
  const ref = devWorkload(devName, objects);
  let detail = 'starting';
  const startedAt = Date.now();
  /** A dev pod of this spec that cannot exec the agent its claim was recorded to hold: install it again. */
  const throwIfAgentMissing = (pods: V1Pod[]) => {
    const missing = pods.find((p) => p.metadata?.annotations?.[SPEC_HASH_ANNOTATION] === specHash && agentMissing(p));
    if (missing) throw new AgentMissingError(missing.metadata?.name ?? '', objects.claim?.metadata.name ?? '');
  };
  /** The installer of a dev pod of this spec cannot pull its image: the agent is to be copied in instead. */
  const throwIfImageUnpulled = (pods: V1Pod[]) => {
    for (const p of pods.filter((x) => ofSpec(x, specHash))) {
      const reason = agentImagePullError(p);
      if (reason) throw new AgentImageUnpulledError(p.metadata?.name ?? '', reason);
    }
  };
  /** What stops the agent from reaching the pod, in each form of delivery, and a claim it cannot write. */
  const agentProblems = (pods: V1Pod[]) => {
    const unwritable = objects.claim && pods.find((p) => ofSpec(p, specHash) && stateUnwritable(p));
    if (unwritable) throw new ClaimUnwritableError(unwritable.metadata?.name ?? '', objects.claim?.metadata.name ?? '');
    if (o.agentOnClaim) throwIfAgentMissing(pods);
    else if (o.agentImage !== undefined) throwIfImageUnpulled(pods);
    else o.agentCopies.offer(pods, specHash);
  };
  const mountRetry = new MountRetry(client, o.log);
  const agent = new AgentAnswer({ greet: (pod) => podPortGreeting(client, pod, AGENT_SSH_PORT, 1000), log: o.log });
  const check = async (): Promise<string | undefined> => {
    o.signal?.throwIfAborted();
    const pods = await devPods(client, devName);
    const pod = pods.find((p) => isReadyDevPod(p, specHash))?.metadata?.name;
    if (pod) return pod;
    agent.offer(agentCandidate(pods, specHash));
    await mountRetry.check(pods.filter((p) => ofSpec(p, specHash)));
    agentProblems(pods);
    const state = await workloadState(client, ref);
    if (state.state === 'failed') {
      // The start error may have come after the list above: what agentProblems says is more to the point.
      agentProblems(await devPods(client, devName));
      throw new DevtoolError(failedMessage(ref.name, state));
    }
    if (state.state === 'progressing' && state.detail !== detail) {
      detail = state.detail;
      o.log(`dev container ${ref.name}: ${detail}`);
    }
    // A claim that does not bind keeps the pod Pending forever: say why instead of timing out.
    if (objects.claim && Date.now() - startedAt > 5000) {
      const problem = await claimProblem(client, objects.claim.metadata.name);
      if (problem)
        throw new DevtoolError(
          `dev container ${ref.name} cannot start: persistent volume claim ${objects.claim.metadata.name} is Pending: ${problem}; set ` +
            `services.<name>.persistentVolume.storageClass, or persistentVolume.enabled: false`,
        );
    }
    return undefined;
  };
  // Polled as before (the failure checks need reads anyway); a watch on the pods cuts each pause short.
  const podWatch = watchPodStart(podWatchApi(client), ref.podSelector, o.log);
  const apiReady = waitUntil(check, {
    timeoutMs,
    intervalMs: POLL_MS,
    retry: isTransient,
    timedOut: () => new DevtoolError(`timed out after ${formatDuration(timeoutMs)} waiting for dev container ${ref.name} (${detail})`),
    clock: { now: () => Date.now(), sleep: (ms) => podWatch.sleep(ms) },
  }).finally(() => {
    podWatch.stop();
    agent.stop();
  });
  const first = await Promise.race([apiReady.then((pod) => ({ pod, agentFirst: false })), agent.answered.then((pod) => ({ pod, agentFirst: true }))]);
  if (!first.agentFirst) return { pod: first.pod, ready: Promise.resolve() };
  const answeredAt = Date.now();
  o.log(`pod ${first.pod}: its agent answers (the API server says ready at the kubelet's next look)`);
  const ready = apiReady.then((pod) => o.log(`pod ${pod}: ready by the API server ${Date.now() - answeredAt} ms after its agent answered`));
  // Handled here too: a caller that failed meanwhile never awaits it.
  ready.catch(() => undefined);
  return { pod: first.pod, ready };
}

function podWatchApi(client: KubeClient): PodWatchApi {
  const path = `/api/v1/namespaces/${encodeURIComponent(client.namespace)}/pods`;
  return {
    watch: (labelSelector, event, done) => new Watch(client.kc).watch(path, { labelSelector }, event, done),
  };
}
