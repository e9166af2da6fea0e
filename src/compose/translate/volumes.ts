/**
 * Storage: top-level named volumes become PersistentVolumeClaims (created once, shared by the
 * services that mount them, kept by `destroy` unless --volumes); anonymous volumes become
 * per-pod claims (volumeClaimTemplates of the service's StatefulSet, so data follows the pod);
 * tmpfs becomes a memory-backed emptyDir; host folders are not deployed (`up` syncs them).
 */
import type { V1PersistentVolumeClaim, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { relative } from 'node:path';
import { environmentLabels } from '../../kube/labels.ts';
import { toDnsLabel } from '../../kube/naming.ts';
import type { PersistentVolumeClaimObject } from '../../kube/objects.ts';
import type { ComposeService } from '../model.ts';
import type { TranslateContext } from './context.ts';

export function persistentVolumeClaims(ctx: TranslateContext): PersistentVolumeClaimObject[] {
  return ctx.project.volumes
    .filter((v) => !v.external)
    .map((v) => {
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
export function podStorage(ctx: TranslateContext, service: ComposeService, perPodClaims: boolean): PodStorage {
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  const claimTemplates: V1PersistentVolumeClaim[] = [];
  const used = new Set<string>();
  for (const v of service.volumes) {
    if (v.kind === 'bind') continue;
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
  let candidate = name.slice(0, 63).replace(/-+$/, '');
  for (let i = 2; used.has(candidate); i++) candidate = `${name.slice(0, 58).replace(/-+$/, '')}-${i}`;
  used.add(candidate);
  return candidate;
}

/** One warning for every host folder of the file: they are not deployed, `up` synchronizes them. */
export function hostFolderWarning(ctx: TranslateContext): string | undefined {
  const entries: string[] = [];
  for (const s of ctx.project.services) {
    for (const v of s.volumes) {
      if (v.kind !== 'bind') continue;
      const rel = relative(ctx.project.projectDir, v.source);
      const shown = rel === '' ? '.' : rel.startsWith('..') || rel.startsWith('/') ? v.source : `./${rel}`;
      entries.push(`${s.name} ${shown}:${v.target}`);
    }
  }
  if (entries.length === 0) return undefined;
  return `host folders are not deployed (devtool up synchronizes them): ${entries.join(', ')}`;
}
