/**
 * An in-memory PipelineCluster for unit tests (runs.test.ts, previews.test.ts): the test sets each
 * Job's state and log.
 */
import type * as k8s from '@kubernetes/client-node';
import { type JobState, type PipelineCluster, RecordConflict, type RunRecord } from './cluster.ts';

/** An in-memory cluster: records with versions, variables Secrets, Jobs whose state the test sets, logs. */
export function fakeCluster() {
  const records = new Map<string, { record: RunRecord; version: number }>();
  const variables = new Map<string, string[]>();
  const jobs = new Map<string, { job: k8s.V1Job; secrets: k8s.V1Secret[]; state: JobState; log: string }>();
  let version = 0;
  const key = (ns: string, name: string) => `${ns}/${name}`;
  const cluster: PipelineCluster = {
    async getRecord(ns, name) {
      const r = records.get(key(ns, name));
      return r && { record: structuredClone(r.record), version: String(r.version) };
    },
    async putRecord(record, v) {
      const k = key(record.namespace, record.name);
      const have = records.get(k);
      if ((v === undefined && have) || (v !== undefined && String(have?.version) !== v)) throw new RecordConflict('conflict');
      records.set(k, { record: structuredClone(record), version: ++version });
      return String(version);
    },
    async deleteRecord(ns, name) {
      records.delete(key(ns, name));
    },
    async putVariables(ns, name, values) {
      if (values.length === 0) variables.delete(key(ns, name));
      else variables.set(key(ns, name), [...values]);
    },
    async getVariables(ns, name) {
      return [...(variables.get(key(ns, name)) ?? [])];
    },
    async deleteVariables(ns, name) {
      variables.delete(key(ns, name));
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
  return { cluster, records, jobs, variables };
}
