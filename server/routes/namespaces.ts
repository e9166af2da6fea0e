/**
 * Namespaces: list the user's own with their real status, create one the user owns, delete (its
 * owner or an admin; never a personal namespace, which lives as long as its account), put to sleep
 * and wake (its owner or an admin; namespaces/sleep.ts). Personal
 * namespace names (`*-devtool`) are reserved: nobody can take another user's before that user
 * signs up; so are Kubernetes', the service's and the operator's (reserved-namespaces.ts). The create and
 * delete rules live in namespaces/actions.ts, shared with the dashboard's forms.
 */
import { type NamespaceBody, routes } from '../../api/routes.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { createNamespaceFor, deleteNamespaceAs, sleepNamespaceAs, wakeNamespaceAs } from '../namespaces/actions.ts';
import { refusePersonalName, routeOptions } from './route-options.ts';
import { ApiError } from '../errors.ts';
import type { NamespaceRecord } from '../store/store.ts';
import type { KubeCredentialSource } from '../kube-credentials.ts';
import type { NamespaceDeps, OwnerCluster } from '../namespaces/sleep.ts';
import { namespaceBody } from '../namespaces/view.ts';

export const defaultOwnerCluster: OwnerClusterFactory = async (token) => {
  const [{ userKubeConfig }, { kubeOwnerCluster }] = await Promise.all([import('../pipelines/kube-cluster.ts'), import('../namespaces/kube-owner.ts')]);
  return kubeOwnerCluster(await userKubeConfig(token));
};

/** The owner's side of the cluster, acting with `token` (the unit tests' fake; default client-node). */
export type OwnerClusterFactory = (token: string) => Promise<OwnerCluster>;

/** What sleep, wake and their sweep act with: the owner's cluster through a token of the owner's ServiceAccount. */
export function namespaceDeps(ctx: ServiceDeps, source: KubeCredentialSource | undefined, clusterFactory = defaultOwnerCluster): NamespaceDeps {
  return {
    store: ctx.store,
    now: ctx.now,
    actAs: async (owner) => {
      if (!source) throw new ApiError(503, 'this devtool service cannot act as its users: its operator has not set DEVTOOL_KUBE_SERVER');
      const { token } = await source.issuer.issue(owner, source.tokenSeconds);
      return clusterFactory(token);
    },
  };
}

export function registerNamespaceRoutes(app: App, ctx: ServiceDeps, auth: Authenticator, deps: NamespaceDeps): void {
  const r = routes;
  const body = (n: NamespaceRecord): NamespaceBody => namespaceBody(n, ctx.config.namespaceIdle ?? {});
  app.get(r.listNamespaces.url, routeOptions(r.listNamespaces, auth), async (request) => {
    const list = await ctx.store.listNamespaces(userOf(request).name);
    return { namespaces: list.map(body) };
  });

  const create = { ...routeOptions(r.createNamespace, auth, { body: r.createNamespace.body }), preValidation: refusePersonalName('namespace') };
  app.post(r.createNamespace.url, create, async (request, reply) => {
    return reply.code(201).send(body(await createNamespaceFor(ctx, userOf(request), request.body.name)));
  });

  app.delete(r.deleteNamespace.url, routeOptions(r.deleteNamespace, auth, { params: r.deleteNamespace.params }), async (request, reply) => {
    await deleteNamespaceAs(ctx, userOf(request), request.params.name);
    return reply.code(202).send(null);
  });

  app.post(r.sleepNamespace.url, routeOptions(r.sleepNamespace, auth, { params: r.sleepNamespace.params }), async (request) => {
    const user = userOf(request);
    const ns = await sleepNamespaceAs(ctx, deps, user, request.params.name);
    request.log.info({ namespace: ns.name, by: user.name }, 'namespace put to sleep');
    return body(ns);
  });
  app.post(r.wakeNamespace.url, routeOptions(r.wakeNamespace, auth, { params: r.wakeNamespace.params }), async (request) => {
    const user = userOf(request);
    const ns = await wakeNamespaceAs(ctx, deps, user, request.params.name);
    request.log.info({ namespace: ns.name, by: user.name }, 'namespace woken');
    return body(ns);
  });
}
