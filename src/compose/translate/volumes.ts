/**
 * Storage: top-level named volumes become PersistentVolumeClaims (created once, shared by the
 * services that mount them, kept by `destroy` unless --volumes); anonymous volumes become
 * per-pod claims (volumeClaimTemplates of the service's StatefulSet, so data follows the pod);
 * tmpfs becomes a memory-backed emptyDir. Host volumes follow the deploy's plan (host-volumes.ts):
 * baked ones are in the service's image already, runtime-data folders become a claim each (named
 * after the service and the path), the rest are not deployed and each is named in a warning.
 */
import type { V1PersistentVolumeClaim, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { relative } from 'node:path';
import { environmentLabels } from '../../kube/labels.ts';
import { DNS_LABEL_MAX, toDnsLabel } from '../../kube/naming.ts';
import type { PersistentVolumeClaimObject } from '../../kube/objects.ts';
import type { HostVolumeUse } from '../host-volumes.ts';
import type { ComposeService } from '../model.ts';
import type { TranslateState } from './state.ts';

/** The size of the claim of a runtime-data host folder (the default of named volumes). */
const HOST_CLAIM_SIZE = '1Gi';

export function persistentVolumeClaims(ctx: TranslateState): PersistentVolumeClaimObject[] {
  const claimOwners = new Map([...ctx.project.volumes].map((v) => [ctx.claimNames.get(v.name), v.name]));
  const hostClaims: PersistentVolumeClaimObject[] = [];
  for (const s of ctx.project.services) {
    for (const v of s.volumes) {
      if (v.kind !== 'bind' || hostUse(ctx, s, v.target)?.use !== 'claim') continue;
      const name = hostClaimName(ctx, s, v.target);
      const other = claimOwners.get(name);
      if (other !== undefined) {
        ctx.problems.push({ pos: v.pos, message: `the claim of this runtime-data folder would be named "${name}", like volume "${other}"; rename the volume` });
        continue;
      }
      hostClaims.push({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name, labels: environmentLabels(ctx.options.name) },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: HOST_CLAIM_SIZE } } },
      });
    }
  }
  const declared = ctx.project.volumes
    .filter((v) => !v.external)
    .map((v): PersistentVolumeClaimObject => {
      const annotations = Object.fromEntries(v.labels);
      return {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: ctx.claimNames.get(v.name)!,
          labels: environmentLabels(ctx.options.name),
          ...(v.labels.size > 0 ? { annotations } : {}),
        },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: v.size } },
          ...(v.storageClass ? { storageClassName: v.storageClass } : {}),
        },
      };
    });
  return [...declared, ...hostClaims];
}

function hostUse(ctx: TranslateState, service: ComposeService, target: string): HostVolumeUse | undefined {
  const uses = ctx.options.hostVolumes?.[service.name];
  return uses && Object.hasOwn(uses, target) ? uses[target] : undefined;
}

/** The claim of a runtime-data host folder: `<service>-<path>` ("db" and /var/lib/data: "db-var-lib-data"). */
function hostClaimName(ctx: TranslateState, service: ComposeService, target: string): string {
  const base = `${ctx.serviceNames.get(service.name)!}-${toDnsLabel(target.replace(/^\/+/, '')) || 'root'}`;
  if (base.length <= DNS_LABEL_MAX) return base;
  const hash = createHash('sha256').update(target).digest('hex').slice(0, 8);
  return `${base.slice(0, DNS_LABEL_MAX - `-${hash}`.length).replace(/-+$/, '')}-${hash}`;
}

/**
 * Whether the service mounts a claim of runtime data from a host folder. It stays a Deployment
 * (so `up` can still develop it), whose old pod is stopped before a new one is made (workloads.ts),
 * so the ReadWriteOnce claim is released.
 */
export function mountsHostClaims(ctx: TranslateState, service: ComposeService): boolean {
  return service.volumes.some((v) => v.kind === 'bind' && hostUse(ctx, service, v.target)?.use === 'claim');
}

/** Whether the service keeps data of its own (named or anonymous volumes): then it is a StatefulSet. */
export function ownsStorage(service: ComposeService): boolean {
  return service.volumes.some((v) => v.kind === 'named' || v.kind === 'anonymous');
}

export interface PodStorage {
  readonly volumes: V1Volume[];
  readonly mounts: V1VolumeMount[];
  /** Per-pod claims for anonymous volumes (StatefulSets only). */
  readonly claimTemplates: V1PersistentVolumeClaim[];
}

/**
 * The pod volumes and container mounts of a service. `perPodClaims`: anonymous volumes become
 * claim templates (StatefulSet); otherwise (Jobs, which cannot have claim templates) they become
 * emptyDirs: a one-off run has no data to keep across runs.
 */
export function podStorage(ctx: TranslateState, service: ComposeService, perPodClaims: boolean): PodStorage {
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  const claimTemplates: V1PersistentVolumeClaim[] = [];
  const used = new Set<string>();
  for (const v of service.volumes) {
    if (v.kind === 'bind') {
      if (hostUse(ctx, service, v.target)?.use !== 'claim') continue;
      const name = unique(pathVolumeName(v.target), used);
      volumes.push({ name, persistentVolumeClaim: { claimName: hostClaimName(ctx, service, v.target) } });
      mounts.push({ name, mountPath: v.target, ...(v.readOnly ? { readOnly: true } : {}) });
      continue;
    }
    const readOnly = v.kind !== 'tmpfs' && v.readOnly ? { readOnly: true } : {};
    if (v.kind === 'named') {
      const claim = ctx.claimNames.get(v.volume)!;
      const name = unique(`vol-${claim}`, used);
      volumes.push({ name, persistentVolumeClaim: { claimName: claim } });
      mounts.push({ name, mountPath: v.target, ...readOnly, ...(v.subPath ? { subPath: v.subPath } : {}) });
      continue;
    }
    const name = unique(pathVolumeName(v.target), used);
    if (v.kind === 'tmpfs') {
      volumes.push({ name, emptyDir: { medium: 'Memory' } });
    } else if (perPodClaims) {
      // The claims a StatefulSet makes from its templates outlive it; the environment label on
      // them lets `destroy --volumes` find them.
      claimTemplates.push({
        metadata: { name, labels: environmentLabels(ctx.options.name) },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      });
    } else {
      volumes.push({ name, emptyDir: {} });
    }
    mounts.push({ name, mountPath: v.target, ...readOnly });
  }
  return { volumes, mounts, claimTemplates };
}

/**
 * A volume name from its mount path ("/var/lib/data" to "data-var-lib-data"): stable when the
 * file's list is reordered, which matters because a StatefulSet's claim templates cannot change.
 */
function pathVolumeName(target: string): string {
  const base = toDnsLabel(`data-${target.replace(/^\/+/, '')}`) || 'data';
  if (base.length <= 50) return base;
  const hash = createHash('sha256').update(target).digest('hex').slice(0, 8);
  return `${base.slice(0, 50).replace(/-+$/, '')}-${hash}`;
}

function unique(name: string, used: Set<string>): string {
  let candidate = name.slice(0, DNS_LABEL_MAX).replace(/-+$/, '');
  // Room for a suffix of up to 4 digits.
  for (let i = 2; used.has(candidate); i++) candidate = `${name.slice(0, DNS_LABEL_MAX - 5).replace(/-+$/, '')}-${i}`;
  used.add(candidate);
  return candidate;
}

/**
 * The warnings about host volumes: with a plan, one per volume that is not deployed, naming it and
 * why; without one (a translation that read no files), one for all of them.
 */
export function hostFolderWarnings(ctx: TranslateState): string[] {
  const entries: string[] = [];
  const warnings: string[] = [];
  for (const s of ctx.project.services) {
    for (const v of s.volumes) {
      if (v.kind !== 'bind') continue;
      const shown = shownHostPath(ctx.project.projectDir, v.source);
      if (!ctx.options.hostVolumes) {
        entries.push(`${s.name} ${shown}:${v.target}`);
        continue;
      }
      const use = hostUse(ctx, s, v.target);
      if (use?.use === 'skip') warnings.push(`service ${s.name}: host volume ${shown}:${v.target} is not deployed: ${use.reason}`);
    }
  }
  if (entries.length > 0) warnings.push(`host folders are not deployed (devtool up synchronizes them): ${entries.join(', ')}`);
  return warnings;
}

/** A host path as the file would write it: `./x` inside the project, `../x` beside it, else absolute. */
export function shownHostPath(projectDir: string, source: string): string {
  const rel = relative(projectDir, source);
  if (rel === '') return '.';
  if (rel.startsWith('/')) return source;
  if (!rel.startsWith('..')) return `./${rel}`;
  return rel.startsWith('../..') || rel === '..' ? source : rel;
}
