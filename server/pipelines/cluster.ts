/**
 * What pipeline runs need of the cluster, acting with ONE user's credentials (a token of the user's
 * own ServiceAccount): Kubernetes RBAC decides whether the user may run a pipeline in a namespace,
 * exactly as it decides for the user's own kubectl. The record of a pipeline is a ConfigMap
 * `devtool-pipeline-<name>` in the pipeline's namespace (so `kubectl get configmaps -l
 * devtool.dev/pipeline` lists them, and deleting the namespace removes them); a run is a Job and two
 * Secrets owned by it. The deploy's `--var` values (which may be passwords) are kept for destroy in
 * the Secret `devtool-pipeline-<name>-vars` beside the record, and go with it. The unit tests drive runs.ts with an in-memory fake of this interface.
 */
import type { Writable } from 'node:stream';
import type * as k8s from '@kubernetes/client-node';
import type { PipelineRunBody } from '../../src/service/contract.ts';

export type RunRecord = Omit<PipelineRunBody, 'skipped'> & {
  /** deploy's inputs, kept for destroy (which clones the same repository). Variables are kept apart, in a Secret (putVariables). */
  runId: string;
};

/** The Job's state as the service reads it. */
export type JobState = { state: 'running' } | { state: 'succeeded' } | { state: 'failed'; reason: string; message: string } | { state: 'missing' };

export class RecordConflict extends Error {}
/** Kubernetes refused the user (403) or the namespace does not exist (404): the one line to show. */
export class ClusterRefusal extends Error {
  constructor(
    readonly statusCode: 403 | 404,
    message: string,
  ) {
    super(message);
  }
}

export interface PipelineCluster {
  getRecord(namespace: string, name: string): Promise<{ record: RunRecord; version: string } | undefined>;
  /**
   * Creates (version undefined) or replaces the record at `version`; RecordConflict when another
   * writer got there first. Answers the new version.
   */
  putRecord(record: RunRecord, version: string | undefined, labels: Record<string, string>): Promise<string>;
  deleteRecord(namespace: string, name: string): Promise<void>;
  /**
   * The pipeline's variables Secret holds exactly `variables` (NAME=VALUE, in order; none: no
   * Secret), replacing what it held.
   */
  putVariables(namespace: string, name: string, variables: readonly string[], labels: Record<string, string>): Promise<void>;
  /** The variables putVariables kept, in order (none when there is no Secret). */
  getVariables(namespace: string, name: string): Promise<string[]>;
  deleteVariables(namespace: string, name: string): Promise<void>;
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

export const recordName = (name: string) => `devtool-pipeline-${name}`;
/** The Secret keeping deploy's variables for destroy: keys variableKey(i) (job.ts). */
export const variablesSecretName = (name: string) => `devtool-pipeline-${name}-vars`;
