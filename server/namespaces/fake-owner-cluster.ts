/**
 * An in-memory OwnerCluster for unit tests: Deployments and CronJobs per namespace, changed by the
 * real patches of workloads/scaling.ts, with the availability and activity the test sets.
 */
import { cronJobPatch, notYetAvailable, type ScaleAction, scalePatch } from '../workloads/scaling.ts';
import type { OwnerCluster } from './sleep.ts';

interface FakeObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { replicas?: number; suspend?: boolean };
  status?: { availableReplicas?: number };
}

/** A JSON merge patch (RFC 7396) applied in place: null removes. */
function merge(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k];
    else if (typeof v === 'object' && !Array.isArray(v)) {
      if (typeof target[k] !== 'object' || target[k] === null) target[k] = {};
      merge(target[k] as Record<string, unknown>, v as Record<string, unknown>);
    } else target[k] = v;
  }
}

export function fakeOwnerCluster() {
  const deployments = new Map<string, FakeObject[]>();
  const cronJobs = new Map<string, FakeObject[]>();
  const activity = new Map<string, string[]>();
  /** The tokens the cluster was made with, in order: whose rights each change used. */
  const tokens: string[] = [];
  const cluster: OwnerCluster = {
    async scaleWorkloads(namespace: string, action: ScaleAction) {
      let changed = 0;
      for (const d of deployments.get(namespace) ?? []) {
        const patch = scalePatch(d, action);
        if (!patch) continue;
        merge(d as unknown as Record<string, unknown>, patch as Record<string, unknown>);
        changed++;
      }
      for (const c of cronJobs.get(namespace) ?? []) {
        const patch = cronJobPatch(c, action);
        if (!patch) continue;
        merge(c as unknown as Record<string, unknown>, patch as Record<string, unknown>);
        changed++;
      }
      return changed;
    },
    async unavailableWorkloads(namespace: string) {
      return (deployments.get(namespace) ?? []).flatMap((d) => notYetAvailable(d) ?? []);
    },
    async activityTimes(namespace: string) {
      return [...(activity.get(namespace) ?? [])];
    },
  };
  return {
    factory: async (token: string) => {
      tokens.push(token);
      return cluster;
    },
    deployments,
    cronJobs,
    activity,
    tokens,
    /** Every Deployment of the namespace has its wanted replicas available. */
    becomeAvailable(namespace: string) {
      for (const d of deployments.get(namespace) ?? []) d.status = { availableReplicas: d.spec.replicas ?? 1 };
    },
  };
}
