/**
 * The original a dev container replaces is a Deployment or a StatefulSet
 * (docs/decisions/0034-statefulset-first-pods-claims.md). The mirror is a Deployment either way; for a StatefulSet it is built
 * from what the StatefulSet's first pod would be: its pod template, its volumeClaimTemplates turned
 * into that pod's claims (`<template>-<statefulset>-<first ordinal>`, which the dev pod reuses while
 * the StatefulSet is at zero), and that pod's host name and subdomain (so its DNS name and
 * `hostname` stay what the application expects). Pure: no cluster here.
 */
import type { V1DeploymentSpec, V1PersistentVolumeClaim, V1Volume } from '@kubernetes/client-node';
import { DevtoolError } from '../base/errors.ts';
import type { DeploymentObject, StatefulSetObject } from '../kube/objects.ts';

/** What `up` develops: the workload it scales to zero and mirrors. */
export type OriginalObject = DeploymentObject | StatefulSetObject;
export type OriginalKind = OriginalObject['kind'];

/** The kind as messages and kubectl name it: "deployment", "statefulset". */
export function kindWord(kind: OriginalKind): string {
  return kind.toLowerCase();
}

/** The original's pod template as a Deployment spec (a copy: the original is not changed). */
export function mirrorSourceSpec(original: OriginalObject): V1DeploymentSpec | undefined {
  if (original.kind === 'Deployment') return structuredClone(original.spec);
  const sts = original.spec;
  if (!sts) return undefined;
  const template = structuredClone(sts.template);
  const pod = template.spec;
  if (pod) {
    const claims = firstPodClaims(original);
    const taken = new Set(claims.map((c) => c.volume));
    const volumes: V1Volume[] = claims.map((c) => ({ name: c.volume, persistentVolumeClaim: { claimName: c.claim } }));
    // A volume of the template with a claim template's name is replaced by the claim, as the controller does.
    pod.volumes = [...(pod.volumes ?? []).filter((v) => !taken.has(v.name)), ...volumes];
    pod.hostname ??= firstPodName(original);
    if (sts.serviceName) pod.subdomain ??= sts.serviceName;
  }
  return { selector: structuredClone(sts.selector), template, ...(sts.minReadySeconds !== undefined ? { minReadySeconds: sts.minReadySeconds } : {}) };
}

/** The StatefulSet's first pod: `<name>-<ordinals.start>` (0 unless the ordinals start elsewhere). */
export function firstPodName(sts: StatefulSetObject): string {
  return `${sts.metadata.name}-${sts.spec?.ordinals?.start ?? 0}`;
}

export interface FirstPodClaim {
  /** The volume name the containers mount (the claim template's name). */
  volume: string;
  /** The claim the StatefulSet gives its first pod, which the dev pod reuses. */
  claim: string;
  /** The claim as the StatefulSet controller would create it, for when it does not exist yet. */
  object: V1PersistentVolumeClaim & { metadata: { name: string } };
}

/** The claims of the first pod, one per volumeClaimTemplate, named as the StatefulSet controller names them. */
export function firstPodClaims(sts: StatefulSetObject): FirstPodClaim[] {
  const pod = firstPodName(sts);
  return (sts.spec?.volumeClaimTemplates ?? []).map((t) => {
    const volume = t.metadata?.name ?? '';
    const claim = `${volume}-${pod}`;
    // Labelled with the pod selector, as the controller labels the claims it creates, so it adopts this one.
    const labels = { ...t.metadata?.labels, ...sts.spec?.selector.matchLabels };
    return {
      volume,
      claim,
      object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, labels }, spec: structuredClone(t.spec) },
    };
  });
}

/**
 * Refuses, before anything changes, a StatefulSet whose claims are deleted when it scales down:
 * scaling it to zero would delete the data the dev container is meant to inherit.
 */
export function checkDevelopable(sts: StatefulSetObject): void {
  if (sts.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete' && (sts.spec.volumeClaimTemplates ?? []).length > 0) {
    throw new DevtoolError(
      `statefulset ${sts.metadata.name} deletes its claims when scaled down (persistentVolumeClaimRetentionPolicy.whenScaled: Delete), so ` +
        `scaling it to 0 for 'devtool up' would delete its data: set whenScaled: Retain on it first`,
    );
  }
}
