/**
 * POST /kube-credentials: a short-lived token of the caller's own ServiceAccount, the API server's
 * URL and CA: what `devtool kubeconfig`'s credential plugin and the CLI's cluster client use. The
 * token is bound to the caller's API token (its Secret): revoking that ends it.
 */
import { type KubeCredentialsBody, routes } from '../../api/routes.ts';
import { type Authenticator, tokenOf, userOf } from '../auth.ts';
import type { App } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import type { KubeCredentialSource } from '../kube-credentials.ts';
import { routeOptions } from './route-options.ts';

export function registerKubeCredentialRoutes(app: App, source: KubeCredentialSource | undefined, auth: Authenticator): void {
  const r = routes.kubeCredentials;
  app.post(r.url, routeOptions(r, auth), async (request): Promise<KubeCredentialsBody> => {
    const user = userOf(request);
    if (!source) throw new ApiError(503, 'this devtool service hands out no Kubernetes credentials: its operator has not set DEVTOOL_KUBE_SERVER');
    const { token, expiresAt } = await source.issuer.issue(user.name, source.tokenSeconds, tokenOf(request).objectRef);
    return { server: source.server, certificateAuthority: source.certificateAuthority, token, expiresAt };
  });
}
