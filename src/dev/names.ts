/**
 * Names, labels and annotations of dev mode, and the keys that tie a dev container to the folder
 * `up` ran from. Everything `down` needs is recorded in the cluster under these names, so it can
 * restore the original even when the `up` that changed it was killed.
 */
import { hostname } from 'node:os';
import { DEV_LABEL as ACTIVITY_DEV_LABEL } from '../../api/activity-labels.ts';
import { sha256 } from '../base/hash.ts';
import { DNS_LABEL_MAX } from '../kube/naming.ts';

/** On the mirror, its pods and its Secret/PVC: the dev name (the manifest's `services` key); the service reads it as activity. */
export const DEV_LABEL = ACTIVITY_DEV_LABEL;
/** On the mirror's pods only: tells dev pods apart from the original's, which share its labels. */
export const DEV_POD_LABEL = 'devtool.dev/dev-pod';

/** On the original and the mirror: which folder (on which machine) activated dev mode. */
export const FOLDER_ANNOTATION = 'devtool.dev/dev-folder';
/** On the original: the same folder in words, host:path (origin.ts), for messages and `down`'s takeover. */
export const ORIGIN_ANNOTATION = 'devtool.dev/dev-origin';
/** On the original: its replicas before `up` (what `down` restores). */
export const REPLICAS_ANNOTATION = 'devtool.dev/dev-replicas';
/** On the original: a hash of its spec before `up` (minus replicas), to notice a redeploy meanwhile. */
export const ORIGINAL_HASH_ANNOTATION = 'devtool.dev/dev-original-hash';
/** On the mirror: the original it replaces. */
export const ORIGINAL_ANNOTATION = 'devtool.dev/dev-original';
/**
 * On the dev Deployment: the devtool version whose `up` made it, so its pod runs that version's
 * agent (dev-version.ts). Dev Deployments without it were made by devtool 0.1.0.
 */
export const DEV_VERSION_ANNOTATION = 'devtool.dev/dev-version';
/** On the mirror (and its pod template): a hash of the dev spec and agent config; a change rolls the pod. */
export const SPEC_HASH_ANNOTATION = 'devtool.dev/dev-spec-hash';

/**
 * On the mirror's claim: the agent the claim already holds (agentSubPath), so that the next dev pod
 * needs no init container to copy it (mirror.ts). Written with its own field manager, so the claim's
 * applies leave it alone.
 */
export const AGENT_INSTALLED_ANNOTATION = 'devtool.dev/agent-installed';

/**
 * On the mirror's claim: a dev pod's agent could not write it (its storage ignores fsGroup), so the dev
 * container keeps its files in an emptyDir until `down --volumes` deletes the claim (unwritable-claim.ts).
 * Written with its own field manager, as AGENT_INSTALLED_ANNOTATION.
 */
export const CLAIM_UNWRITABLE_ANNOTATION = 'devtool.dev/claim-unwritable';

/** On a dev Deployment whose agent is copied in through the API: the devtool-bin image its pods could not pull. */
export const AGENT_UNPULLED_ANNOTATION = 'devtool.dev/agent-image-unpulled';

export const DEV_ANNOTATIONS_ON_ORIGINAL = [FOLDER_ANNOTATION, ORIGIN_ANNOTATION, REPLICAS_ANNOTATION, ORIGINAL_HASH_ANNOTATION] as const;

/** Whether a dev pod was made from the dev spec of this hash (any, without one). */
export function ofSpec(pod: { metadata?: { annotations?: Record<string, string> } }, specHash: string | undefined): boolean {
  return specHash === undefined || pod.metadata?.annotations?.[SPEC_HASH_ANNOTATION] === specHash;
}

/** The mirror Deployment, its claim and its Secret share one name. */
export function mirrorName(original: string): string {
  // Deployment names are subdomains (253), but pod names derive from it: keep it a label.
  return `${original.slice(0, DNS_LABEL_MAX - '-devtool'.length).replace(/[-.]+$/, '')}-devtool`;
}

/**
 * Identifies the folder (and machine) of a dev container's `up` session. The host name is in it so that the same
 * path on two laptops is two folders.
 */
export function folderHash(folder: string, host = hostname()): string {
  return sha256(`${host}\0${folder}`).slice(0, 16);
}

/** The local state directory key (f.home.devDir) of one dev container of one folder. */
export function devKey(folder: string, context: string, namespace: string, devName: string): string {
  return sha256(JSON.stringify([folder, context, namespace, devName])).slice(0, 20);
}

/** JSON with object keys sorted, so equal values always hash the same. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
