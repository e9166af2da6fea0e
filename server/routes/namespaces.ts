/**
 * Namespaces: list the user's own with their real status, create one the user owns, delete (its
 * owner or an admin; never a personal namespace, which lives as long as its account). Personal
 * namespace names (`*-devtool`) are reserved: nobody can take another user's before that user
 * signs up; so are Kubernetes', the service's and the operator's (reserved-namespaces.ts).
 */
import { type NamespaceBody, routes } from '../../api/routes.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import { reservedNamespaceReason } from '../reserved-namespaces.ts';
import { refusePersonalName, routeOptions } from './route-options.ts';
import { ConflictError, type NamespaceRecord } from '../store/store.ts';

const body = (n: NamespaceRecord): NamespaceBody => ({ name: n.name, status: n.status, owner: n.owner, personal: n.personal });

export function registerNamespaceRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): void {
  const r = routes;
  app.get(r.listNamespaces.url, routeOptions(r.listNamespaces, auth), async (request) => {
    const list = await ctx.store.listNamespaces(userOf(request).name);
    return { namespaces: list.map(body) };
  });

  const create = { ...routeOptions(r.createNamespace, auth, { body: r.createNamespace.body }), preValidation: refusePersonalName('namespace') };
  app.post(r.createNamespace.url, create, async (request, reply) => {
    const user = userOf(request);
    const name = request.body.name;
    const reserved = reservedNamespaceReason(ctx.config, name);
    if (reserved) throw new ApiError(403, `namespace ${name} is reserved (${reserved}): choose another name`);
    const existing = await ctx.store.getNamespace(name);
    if (existing?.owner === user.name) {
      throw new ApiError(
        409,
        existing.status === 'Terminating'
          ? `namespace ${name} is yours and being deleted: create it again once it is gone`
          : `namespace ${name} already exists and is yours: devtool namespace use ${name}`,
      );
    }
    if (existing || (await ctx.store.namespaceExists(name))) throw new ApiError(409, `namespace ${name} is taken: choose another name`);
    try {
      return reply.code(201).send(body(await ctx.store.createNamespace({ name, owner: user.name, personal: false })));
    } catch (err) {
      if (err instanceof ConflictError) throw new ApiError(409, `namespace ${name} is taken: choose another name`);
      throw err;
    }
  });

  app.delete(r.deleteNamespace.url, routeOptions(r.deleteNamespace, auth, { params: r.deleteNamespace.params }), async (request, reply) => {
    const user = userOf(request);
    const name = request.params.name;
    const ns = await ctx.store.getNamespace(name);
    if (!ns) {
      if (await ctx.store.namespaceExists(name)) throw new ApiError(403, `namespace ${name} is not managed by devtool: devtool does not delete it`);
      throw new ApiError(404, `namespace ${name} does not exist`);
    }
    if (ns.owner !== user.name && !user.admin) throw new ApiError(403, `namespace ${name}: only its owner (${ns.owner}) or an admin can delete it`);
    if (ns.personal) throw new ApiError(403, `namespace ${name} is the personal namespace of ${ns.owner}: it lives as long as the account`);
    if (ns.status === 'Terminating') return reply.code(202).send(null);
    await ctx.store.deleteNamespace(name);
    return reply.code(202).send(null);
  });
}
