/**
 * The dev volume on a drained node (docs/decisions/0225-dev-volume-on-a-drained-node.md). When the
 * node under the dev pod is drained, the mirror Deployment starts a new dev pod; with the dev
 * container's own claim on a node-local class (local-path), that pod can be scheduled nowhere else
 * and would wait for ever. The laptop holds the synced files, so `up` makes the claim anew (the
 * new pod binds it on a node that takes pods, and the sync fills it from this folder), and keeps
 * the old volume (reclaim policy Retain) with whatever only it held: files not yet synced, the
 * container's `.git`, shell history. Where the volume cannot be kept (no right to patch
 * PersistentVolumes), nothing is deleted: `up` says which node to uncordon, and what to run.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { sleep } from '../base/wait.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { unschedulableCondition } from '../kube/scheduling.ts';
import { claimStranded, freshClaim, retainVolume, type StrandedClaim } from '../kube/stranded-volume.ts';
import { AGENT_BIN_DIR, DATA_VOLUME } from './mirror.ts';
import { AGENT_INSTALLED_ANNOTATION } from './names.ts';

/** The scheduler's words for a pod whose volume is bound to a node it may not use. */
const VOLUME_CONFLICT = /volume node affinity conflict/;
/** The node a WaitForFirstConsumer claim was provisioned for (the provisioner's annotation). */
const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

/** Pure: the dev claim of the first dev pod the scheduler turns down, if one is (an emptyDir dev pod has none). */
export function unschedulableDevClaim(pods: readonly V1Pod[]): string | undefined {
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp || pod.spec?.nodeName || !unschedulableCondition(pod)) continue;
    const claim = pod.spec?.volumes?.find((v) => v.name === DATA_VOLUME)?.persistentVolumeClaim?.claimName;
    if (claim) return claim;
  }
  return undefined;
}

/**
 * Pure: the dev pod runs the agent kept on its claim (agent-cache.ts: no init container copies it),
 * so a dev pod on a new claim finds none until an `up` builds the dev Deployment again.
 */
export function agentFromClaim(pod: V1Pod): boolean {
  return (pod.spec?.containers ?? []).some((c) => (c.volumeMounts ?? []).some((m) => m.name === DATA_VOLUME && m.mountPath === AGENT_BIN_DIR));
}

/** Pure: the line `up` says once the claim is made anew. */
export function movedLine(devName: string, s: { node: string; volume: string }, agentLost = false): string {
  return (
    `the dev volume of ${devName} was on node ${s.node}, which is drained: a new one on another node, filled from this folder ` +
    `(the old one is kept as volume ${s.volume} on ${s.node}, with any file only it held)` +
    (agentLost ? `; the agent was kept on the old one: stop this \`up\` and run it again to copy it in` : '')
  );
}

/** Pure: the line `up` says when it cannot keep the old volume, so it deletes nothing. */
export function refusedLine(devName: string, s: { node: string; volume: string }, why: string): string {
  return (
    `the dev volume of ${devName} is on node ${s.node}, which is drained, and cannot be kept aside (${why}): ` +
    `run \`kubectl uncordon ${s.node}\`, or \`devtool down ${devName} --volumes\` and \`devtool up\` to start from this folder`
  );
}

export interface DrainedVolumeOptions {
  client: KubeClient;
  devName: string;
  notice(line: string): void;
  log(line: string): void;
}

/**
 * Offered the dev pods whenever the tunnel finds none ready (tunnel.ts, noReadyPod): when one waits
 * for a claim stranded on a drained node, makes the claim anew, once per stranded volume, one
 * move at a time.
 */
export class DrainedVolume {
  private busy = false;
  /** Volumes already told about: a refusal is said once, not at every redial. */
  private readonly told = new Set<string>();

  constructor(private readonly o: DrainedVolumeOptions) {}

  offer(pods: readonly V1Pod[]): void {
    const claim = unschedulableDevClaim(pods);
    if (!claim || this.busy) return;
    this.busy = true;
    const why = pods.map((p) => unschedulableCondition(p)?.message ?? '').find((m) => VOLUME_CONFLICT.test(m));
    void this.check(claim, pods.some(agentFromClaim), why)
      .catch((err: unknown) => this.o.log(`dev volume on a drained node: ${(err as Error).message}`))
      .finally(() => {
        this.busy = false;
      });
  }

  private async check(claimName: string, agentLost: boolean, why: string | undefined): Promise<void> {
    const { client } = this.o;
    const stranded = await claimStranded(client, claimName).catch(async (err: unknown) => {
      if (isNotFound(err)) return undefined;
      // A namespace's role reads neither nodes nor PersistentVolumes: the scheduler's words and the
      // node the claim was provisioned for still say it, and nothing can be kept aside.
      if ((err as { code?: number }).code !== 403 || !why) throw err;
      const claim = await client.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace: client.namespace });
      const s = { node: claim.metadata?.annotations?.[SELECTED_NODE] ?? 'its node', volume: claim.spec?.volumeName ?? claimName };
      if (!this.told.has(s.volume)) this.o.notice(refusedLine(this.o.devName, s, 'no right to read nodes or PersistentVolumes'));
      this.told.add(s.volume);
      return undefined;
    });
    if (!stranded || this.told.has(stranded.volume)) return;
    this.told.add(stranded.volume);
    try {
      await retainVolume(client, stranded.volume);
    } catch (err) {
      this.o.notice(
        refusedLine(this.o.devName, stranded, (err as { code?: number }).code === 403 ? 'no right to patch PersistentVolumes' : (err as Error).message),
      );
      return;
    }
    await this.remake(stranded);
    this.o.notice(movedLine(this.o.devName, stranded, agentLost));
  }

  /** Deletes the claim (the volume stays: Retain), makes it anew, unbound, and lets the waiting dev pod start over. */
  private async remake(s: StrandedClaim): Promise<void> {
    const { client } = this.o;
    const name = s.claim.metadata!.name!;
    const namespace = client.namespace;
    this.o.log(`claim ${name}: volume ${s.volume} is on drained node ${s.node}; kept (Retain), the claim is made anew`);
    await client.core.deleteNamespacedPersistentVolumeClaim({ name, namespace });
    // No scheduled pod uses it any more (the drain evicted it): its protection finalizer goes at once.
    for (let i = 0; i < 240; i++) {
      const gone = await client.core.readNamespacedPersistentVolumeClaim({ name, namespace }).then(
        () => false,
        (err: unknown) => isNotFound(err),
      );
      if (gone) break;
      await sleep(250);
    }
    // The old claim's record of the agent it held does not hold for the new one (agent-cache.ts).
    await client.core.createNamespacedPersistentVolumeClaim({ namespace, body: freshClaim(s.claim, [AGENT_INSTALLED_ANNOTATION]) });
    // The waiting pod was turned down against the old claim: its ReplicaSet's next one binds the new claim.
    const pods = await client.core.listNamespacedPod({ namespace, fieldSelector: 'spec.nodeName=' });
    for (const p of pods.items) {
      if (p.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === name)) {
        await client.core.deleteNamespacedPod({ name: p.metadata!.name!, namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      }
    }
  }
}
