/**
 * The cluster as one user sees it: a client acting with a fresh token of the user's own
 * ServiceAccount, and what a pipeline run needs besides (runs.ts RunSettings). Pipelines and
 * previews act through this, so Kubernetes RBAC decides what a user may do, never the service's
 * own rights.
 */
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import type { KubeCredentialSource } from '../kube-credentials.ts';
import { LABEL_MANAGED } from '../store/kubernetes.ts';
import { newToken } from '../tokens.ts';
import type { RunSettings } from './runs.ts';

export type ClusterFactory<C> = (userToken: string) => Promise<C>;

export interface ActingUser<C> {
  cluster: C;
  settings: RunSettings;
}

/** `user`'s view of the cluster; a 503 when the operator has not set what runs need. */
export function actingUser<C>(ctx: AppContext, source: KubeCredentialSource | undefined, clusterFactory: ClusterFactory<C>) {
  return async (user: string): Promise<ActingUser<C>> => {
    const image = ctx.config.runnerImage;
    if (!image || !source) {
      throw new ApiError(503, `this devtool service runs no pipelines: its operator has not set ${image ? 'DEVTOOL_KUBE_SERVER' : 'DEVTOOL_RUNNER_IMAGE'}`);
    }
    const { token } = await source.issuer.issue(user, source.tokenSeconds);
    const settings: RunSettings = {
      runnerImage: image,
      clusterCa: source.certificateAuthority,
      ...(ctx.config.certificate ? { frontDoorCa: ctx.config.certificate } : {}),
      ...(ctx.config.endpointDomain ? { endpointDomain: ctx.config.endpointDomain } : {}),
      ...(ctx.config.publicUrl
        ? {
            service: {
              url: ctx.config.publicUrl,
              // Listed with the user's tokens under this name, and expiring with the run.
              issueApiToken: async (seconds: number, name: string) => {
                const made = newToken(user, name, ctx.now(), seconds / 86_400);
                await ctx.store.addToken(made.record);
                return made.token;
              },
            },
          }
        : {}),
      labels: { [LABEL_MANAGED]: 'devtool-service' },
      issueToken: async (seconds) => (await source.issuer.issue(user, seconds)).token,
      storedSecrets: () => ctx.store.secretValues(user),
      now: ctx.now,
    };
    return { cluster: await clusterFactory(token), settings };
  };
}
