/**
 * The cluster as one user sees it: a client acting with a fresh token of the user's own
 * ServiceAccount, the service's own records of pipeline runs (the store: never an object a user can
 * write), and what a pipeline run needs besides (runs.ts RunSettings). Pipelines and previews act
 * through this, so Kubernetes RBAC decides what a user may do, never the service's own rights.
 */
import type { ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import type { KubeCredentialSource } from '../kube-credentials.ts';
import { LABEL_MANAGED } from '../store/kubernetes.ts';
import { newToken } from '../tokens.ts';
import type { RunRecords } from '../store/store.ts';
import type { PipelineCluster, RunTokens } from './cluster.ts';
import type { RunSettings } from './runs.ts';

/** The user's side of a cluster (RunJobs and what else C needs), acting with `userToken`. */
export type ClusterFactory<C extends PipelineCluster> = (userToken: string) => Promise<Omit<C, keyof RunRecords | keyof RunTokens>>;

export interface ActingUser<C> {
  cluster: C;
  settings: RunSettings;
}

/** `user`'s view of the cluster; a 503 when the operator has not set what runs need. */
export function actingUser<C extends PipelineCluster>(ctx: ServiceDeps, source: KubeCredentialSource | undefined, clusterFactory: ClusterFactory<C>) {
  const r = ctx.store.runs;
  // The store's own methods, bound: the records are the service's, whatever the user's side holds.
  const records: RunRecords = {
    getRecord: (namespace, name) => r.getRecord(namespace, name),
    putRecord: (record, version, labels) => r.putRecord(record, version, labels),
    deleteRecord: (namespace, name) => r.deleteRecord(namespace, name),
    putVariables: (namespace, name, variables, labels) => r.putVariables(namespace, name, variables, labels),
    getVariables: (namespace, name) => r.getVariables(namespace, name),
    deleteVariables: (namespace, name) => r.deleteVariables(namespace, name),
    listRecords: (namespace) => r.listRecords(namespace),
  };
  const tokens: RunTokens = {
    endRunToken: async (user, id) => {
      await ctx.store.deleteToken(user, id);
    },
  };
  return async (user: string): Promise<ActingUser<C>> => {
    const image = ctx.config.runnerImage;
    if (!image || !source) {
      throw new ApiError(503, `this devtool service runs no pipelines: its operator has not set ${image ? 'DEVTOOL_KUBE_SERVER' : 'DEVTOOL_RUNNER_IMAGE'}`);
    }
    const { token } = await source.issuer.issue(user, source.tokenSeconds);
    const settings: RunSettings = {
      user,
      runnerImage: image,
      clusterCa: source.certificateAuthority,
      ...(ctx.config.certificate ? { frontDoorCa: ctx.config.certificate } : {}),
      ...(ctx.config.endpointDomain ? { endpointDomain: ctx.config.endpointDomain } : {}),
      ...(ctx.config.ingressClass ? { ingressClass: ctx.config.ingressClass } : {}),
      ...(ctx.config.publicUrl
        ? {
            service: {
              url: ctx.config.publicUrl,
              // Listed with the user's tokens under this name, and expiring with the run.
              issueApiToken: async (seconds: number, name: string) => {
                const made = newToken(user, name, ctx.now(), seconds / 86_400);
                await ctx.store.addToken({ ...made.record, scope: 'run' });
                return { token: made.token, id: made.record.id };
              },
            },
          }
        : {}),
      labels: { [LABEL_MANAGED]: 'devtool-service' },
      issueToken: async (seconds) => (await source.issuer.issue(user, seconds)).token,
      storedSecrets: () => ctx.store.secretValues(user),
      now: ctx.now,
    };
    return { cluster: { ...(await clusterFactory(token)), ...records, ...tokens } as C, settings };
  };
}
