/**
 * What pipeline runs need, from two sides that are trusted differently:
 * - RunRecords (the store, server/store/): the pipeline's record and its deploy's `--var` values,
 *   kept where only the service writes. A destroy or a redeploy with the last parameters acts on
 *   these, never on an object a user can write.
 * - RunJobs, acting with ONE user's credentials (a token of the user's own ServiceAccount): whether
 *   the user may run or read pipelines in a namespace (Kubernetes RBAC decides, exactly as for the
 *   user's own kubectl), and the run itself: a Job and its Secrets in the pipeline's namespace.
 * - RunTokens: the run's own API token, which the service revokes once the run has ended.
 * A PipelineCluster is all three, for one acting user (acting-user.ts puts them together); the unit tests
 * drive runs.ts with an in-memory fake of it.
 */
import type { Writable } from 'node:stream';
import type * as k8s from '@kubernetes/client-node';
import type { RunRecords } from '../store/store.ts';

export { NamespaceGone, RecordConflict, type RunRecord } from '../store/store.ts';

/** The Job's state as the service reads it. */
export type JobState = { state: 'running' } | { state: 'succeeded' } | { state: 'failed'; reason: string; message: string } | { state: 'missing' };

/** Kubernetes refused the user (403) or the namespace does not exist (404): the one line to show. */
export class ClusterRefusal extends Error {
  constructor(
    readonly statusCode: 403 | 404,
    message: string,
  ) {
    super(message);
  }
}

/** What the acting user may do with pipelines in a namespace: run them (create Jobs), read them (get pods), or nothing. */
export type PipelineAccess = 'run' | 'read' | 'none';

export interface RunJobs {
  access(namespace: string): Promise<PipelineAccess>;
  /** The Job, then its Secrets owned by it (deleting the Job deletes them). */
  createRun(job: k8s.V1Job, secrets: k8s.V1Secret[]): Promise<void>;
  jobState(namespace: string, job: string): Promise<JobState>;
  /** Deletes the Job with its pods and Secrets. */
  deleteJob(namespace: string, job: string): Promise<void>;
  /** The runner's output: its first `headBytes` and its last `tailBytes` (undefined: no pod). */
  logOf(namespace: string, job: string, headBytes: number, tailBytes: number): Promise<{ head: string; tail: string } | undefined>;
  /** Streams the runner's output into `out` as it comes, until the runner ends or `signal` aborts. false: no pod started. */
  followLog(namespace: string, job: string, out: Writable, signal: AbortSignal): Promise<boolean>;
}

/** The run's own API token, the service's to end (the store). */
export interface RunTokens {
  /** Revokes the user's token `id` (nothing when it is gone already). */
  endRunToken(user: string, id: string): Promise<void>;
}

export type PipelineCluster = RunRecords & RunTokens & RunJobs;
