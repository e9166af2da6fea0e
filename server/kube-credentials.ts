/**
 * Kubernetes credentials for users: a short-lived token of the user's own ServiceAccount
 * (`user-<name>`, a TokenRequest), with the API server's URL and CA. The token carries exactly the
 * rights of that ServiceAccount (the `admin` ClusterRole in the namespaces it owns, through their
 * RoleBindings), never the service's own. The service needs `create` on serviceaccounts/token in
 * its namespace for this, nothing more.
 */
import type * as k8s from '@kubernetes/client-node';
import { makeKeepAliveApiClient } from './kube-api.ts';
import { serviceAccountName } from './store/kubernetes.ts';

/**
 * Makes a token of a user's ServiceAccount; the fake in the unit tests stands for TokenRequest.
 * `boundTo`: the Secret (in the service's namespace) of the API token it was made from: the API
 * server accepts the token only while that Secret exists with that uid, so revoking the API token
 * ends the cluster credentials made from it at once, whatever their expiry.
 */
export interface KubeTokenIssuer {
  issue(user: string, seconds: number, boundTo?: { name: string; uid: string }): Promise<{ token: string; expiresAt: string }>;
}

/** What the route hands out besides the token, and for how long a token lives. */
export interface KubeCredentialSettings {
  /** The API server URL users' kubeconfigs use (DEVTOOL_KUBE_SERVER). */
  server: string;
  /** PEM of the cluster CA (DEVTOOL_KUBE_CA_FILE, default the pod's ServiceAccount ca.crt). */
  certificateAuthority: string;
  /** Token lifetime in seconds (DEVTOOL_KUBE_TOKEN_SECONDS, default 3600; TokenRequest's minimum is 600). */
  tokenSeconds: number;
}

export interface KubeCredentialSource extends KubeCredentialSettings {
  issuer: KubeTokenIssuer;
}

/** The TokenRequest issuer, acting with the service's own credentials (the pod's, or KUBECONFIG's). */
export async function tokenRequestIssuer(namespace: string, kc?: k8s.KubeConfig): Promise<KubeTokenIssuer> {
  const mod = await import('@kubernetes/client-node');
  let config = kc;
  if (!config) {
    config = new mod.KubeConfig();
    config.loadFromDefault();
  }
  const core = makeKeepAliveApiClient(mod, config, mod.CoreV1Api);
  return {
    async issue(user, seconds, boundTo) {
      const answer = await core.createNamespacedServiceAccountToken({
        name: serviceAccountName(user),
        namespace,
        // No audiences: the API server's own, so the token authenticates to it and nowhere else.
        body: {
          spec: {
            audiences: [],
            expirationSeconds: seconds,
            ...(boundTo ? { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: boundTo.name, uid: boundTo.uid } } : {}),
          },
        },
      });
      const token = answer.status?.token;
      const expiry = answer.status?.expirationTimestamp;
      if (!token || !expiry) throw new Error(`TokenRequest for ${serviceAccountName(user)} answered without a token`);
      return { token, expiresAt: new Date(expiry).toISOString() };
    },
  };
}
