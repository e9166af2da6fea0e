/**
 * Users, for admins: list, create (with its personal namespace and a first token, as the
 * operator's create-user does), make admin or take it back, disable (access ends at once,
 * everything else stays), enable, delete (with every namespace the user owns: accounts.ts). A plain
 * user is refused; nobody changes their own account here, so an admin cannot lock themselves out
 * and the last admin stays one.
 */
import { routes, type UserBody } from '../../api/routes.ts';
import { createAccount, deleteAccount, disableAccount, enableAccount, otherUser, requireAdmin } from '../accounts.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import type { UserRecord } from '../store/store.ts';
import { routeOptions } from './route-options.ts';

const body = (u: UserRecord): UserBody => ({ name: u.name, admin: u.admin, disabled: u.disabled === true });

export function registerUserRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): void {
  const r = routes;
  const current = async (name: string): Promise<UserRecord> => {
    const u = await ctx.store.getUser(name);
    if (!u) throw new ApiError(404, `no user ${name}`);
    return u;
  };

  app.get(r.listUsers.url, routeOptions(r.listUsers, auth), async (request) => {
    requireAdmin(userOf(request), 'list');
    return { users: (await ctx.store.listUsers()).map(body) };
  });

  app.post(r.createUser.url, routeOptions(r.createUser, auth, { body: r.createUser.body }), async (request, reply) => {
    requireAdmin(userOf(request), 'create');
    // createAccount refuses a bad or taken name (400, 409) and leaves nothing half-made.
    return reply.code(201).send(await createAccount(ctx.store, request.body.name, request.body.admin ?? false, ctx.now()));
  });

  app.put(r.setUserAdmin.url, routeOptions(r.setUserAdmin, auth, { params: r.setUserAdmin.params, body: r.setUserAdmin.body }), async (request) => {
    const name = otherUser(userOf(request), request.params.name, 'make or unmake admin');
    if (!(await ctx.store.setUserAdmin(name, request.body.admin))) throw new ApiError(404, `no user ${name}`);
    return body(await current(name));
  });

  app.post(r.disableUser.url, routeOptions(r.disableUser, auth, { params: r.disableUser.params }), async (request) => {
    const name = otherUser(userOf(request), request.params.name, 'disable');
    await disableAccount(ctx.store, name);
    return body(await current(name));
  });

  app.post(r.enableUser.url, routeOptions(r.enableUser, auth, { params: r.enableUser.params }), async (request) => {
    const name = otherUser(userOf(request), request.params.name, 'enable');
    await enableAccount(ctx.store, name, ctx.now(), false);
    return body(await current(name));
  });

  app.delete(r.deleteUser.url, routeOptions(r.deleteUser, auth, { params: r.deleteUser.params }), async (request) => {
    const name = otherUser(userOf(request), request.params.name, 'delete');
    await current(name);
    return { name, namespaces: await deleteAccount(ctx.store, name) };
  });
}
