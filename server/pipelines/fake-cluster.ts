/**
 * An in-memory PipelineCluster for unit tests (runs.test.ts, previews.test.ts): the test sets each
 * Job's state and log, and what the acting user may do in each namespace (`access`, default: run).
 */
import type * as k8s from '@kubernetes/client-node';
import { memoryRunRecords } from '../store/memory-runs.ts';
import type { JobState, PipelineAccess, PipelineCluster } from './cluster.ts';

/** An in-memory cluster: records with versions, variables, Jobs whose state the test sets, logs. */
export function fakeCluster() {
  const { runs, records, variables } = memoryRunRecords();
  const jobs = new Map<string, { job: k8s.V1Job; secrets: k8s.V1Secret[]; state: JobState; log: string }>();
  const access = new Map<string, PipelineAccess>();
  /** The run tokens revoked, as `user/id`. */
  const endedTokens: string[] = [];
  const cluster: PipelineCluster = {
    ...runs,
    async endRunToken(user, id) {
      endedTokens.push(`${user}/${id}`);
    },
    async access(ns) {
      return access.get(ns) ?? 'run';
    },
    async createRun(job, secrets) {
      jobs.set(job.metadata!.name!, { job, secrets, state: { state: 'running' }, log: '' });
    },
    async jobState(_ns, job) {
      return jobs.get(job)?.state ?? { state: 'missing' };
    },
    async deleteJob(_ns, job) {
      jobs.delete(job);
    },
    async logOf(_ns, job) {
      const j = jobs.get(job);
      return j && { head: j.log, tail: j.log };
    },
    async followLog() {
      return false;
    },
  };
  return { cluster, records, jobs, variables, access, endedTokens };
}
