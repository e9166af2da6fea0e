/**
 * Namespaces: list the user's own with their real status, create one the user owns, delete (its
 * owner or an admin; never a personal namespace, which lives as long as its account). Personal
 * namespace names (`*-devtool`) are reserved: nobody can take another user's before that user
 * signs up; so are Kubernetes', the service's and the operator's (reserved-namespaces.ts). The rules
 * live in namespace-actions.ts, shared with the dashboard's forms.
 */
import { type NamespaceBody, routes } from '../../api/routes.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { createNamespaceFor, deleteNamespaceAs } from '../namespace-actions.ts';
import { refusePersonalName, routeOptions } from './route-options.ts';
import type { NamespaceRecord } from '../store/store.ts';

const body = (n: NamespaceRecord): NamespaceBody => ({ name: n.name, status: n.status, owner: n.owner, personal: n.personal });

export function registerNamespaceRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): void {
  const r = routes;
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
}
