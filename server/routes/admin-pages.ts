/**
 * The dashboard's admin page (`/admin`) and its forms, for admins only: users (create, make admin
 * or take it back, disable, enable, delete after a confirmation naming its namespaces), every
 * namespace and preview (sleep, wake, delete), and the settings the service runs with. Each form
 * acts through the functions the API routes call (accounts.ts, namespaces/actions.ts), so a refusal
 * is the routes' own line. A plain user gets 403 with one line, for the page and every form.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createAccount, deleteAccount, disableAccount, enableAccount, otherUser, requireAdmin } from '../accounts.ts';
import { csrfValid } from '../browser-sessions.ts';
import { type AdminNamespace, adminPage, deleteUserPage, userCreatedPage } from '../dashboard/admin-page.ts';
import { settingsRows } from '../dashboard/settings-rows.ts';
import { ApiError } from '../errors.ts';
import { deleteNamespaceAs, mayChangeSleep, mayDelete, sleepNamespaceAs, wakeNamespaceAs } from '../namespaces/actions.ts';
import { lastActivityOf } from '../namespaces/idle.ts';
import type { NamespaceDeps } from '../namespaces/sleep.ts';
import { namespaceBody } from '../namespaces/view.ts';
import { html, page } from '../pages/html.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord } from '../store/store.ts';
import { signedInOf, type Viewer } from './dashboard-viewer.ts';
import { formOf, refuseCsrf, sendPage } from './login-pages.ts';

export interface AdminPagesDeps {
  viewerOf(request: FastifyRequest, reply: FastifyReply): Promise<Viewer | undefined>;
  statusText(n: NamespaceRecord): string;
  /** Sleep and wake act as the namespace's owner; absent when the service has no cluster credentials. */
  namespaces?: NamespaceDeps;
}

const ADMINS_ONLY = 'Only admins can use the admin page.';

function notAdmin(reply: FastifyReply, v: Viewer): FastifyReply {
  return sendPage(
    reply,
    403,
    page({
      title: 'Admins only',
      ...signedInOf(v),
      error: ADMINS_ONLY,
      body: html`<p><a href="/">Home</a></p>`,
    }),
  );
}

export function registerAdminPages(app: App, ctx: ServiceDeps, deps: AdminPagesDeps): void {
  const row = (n: NamespaceRecord, viewer: Viewer): AdminNamespace => {
    const body = namespaceBody(n, ctx.config.namespaceIdle ?? {});
    const last = lastActivityOf(n);
    return {
      name: n.name,
      owner: n.owner,
      preview: n.preview !== undefined,
      status: deps.statusText(n),
      ...(body.sleep ? { sleep: body.sleep.state } : {}),
      sleepable: mayChangeSleep(viewer.user, n) && !n.preview && n.status === 'Active',
      ...(last !== undefined ? { lastActivity: new Date(last).toISOString() } : {}),
      ...(body.sleepsAt ? { sleepsAt: body.sleepsAt } : {}),
      ...(body.deletesAt ? { deletesAt: body.deletesAt } : {}),
      deletable: mayDelete(viewer.user, n) && !n.preview && n.status === 'Active',
    };
  };

  const admin = async (v: Viewer, reply: FastifyReply, status = 200, error?: string) => {
    const [users, namespaces] = await Promise.all([ctx.store.listUsers(), ctx.store.listNamespaces()]);
    const data = {
      user: v.user.name,
      ...(v.session ? { csrf: v.session.csrf } : {}),
      users: users.map((u) => ({ name: u.name, admin: u.admin, disabled: u.disabled === true })),
      namespaces: namespaces.sort((a, b) => a.name.localeCompare(b.name)).map((n) => row(n, v)),
      settings: settingsRows(ctx.config),
      ...(error ? { error } : {}),
    };
    return sendPage(reply, status, adminPage(data));
  };

  app.get('/admin', async (request, reply) => {
    const v = await deps.viewerOf(request, reply);
    if (!v) return reply;
    return v.user.admin ? admin(v, reply) : notAdmin(reply, v);
  });

  /**
   * An admin form's POST: a browser session with a valid CSRF token, an admin, then `act`; its
   * answer is a page, or the admin page again. A refusal is the admin page with its one line.
   */
  const form =
    (act: (v: Viewer, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const v = await deps.viewerOf(request, reply);
      if (!v) return reply;
      if (!v.session || !csrfValid(ctx, request, v.session, formOf(request)['csrf'])) return refuseCsrf(reply);
      if (!v.user.admin) return notAdmin(reply, v);
      try {
        return (await act(v, request, reply)) ?? reply.redirect('/admin', 303);
      } catch (err) {
        if (err instanceof ApiError) return admin(v, reply, err.statusCode, `${err.message}.`);
        throw err;
      }
    };
  const nameOf = (request: FastifyRequest) => (request.params as { name: string }).name;
  const existing = async (name: string) => {
    if (!(await ctx.store.getUser(name))) throw new ApiError(404, `no user ${name}`);
    return name;
  };

  app.post(
    '/admin/users',
    form(async (v, request, reply) => {
      requireAdmin(v.user, 'create');
      const f = formOf(request);
      const created = await createAccount(ctx.store, (f['name'] ?? '').trim(), f['admin'] === 'true', ctx.now());
      const url = ctx.config.publicUrl ?? `${request.protocol}://${request.host}`;
      return sendPage(reply, 201, userCreatedPage({ user: v.user.name, csrf: v.session!.csrf, created, url }));
    }),
  );
  app.post(
    '/admin/users/:name/admin',
    form(async (v, request) => {
      const name = otherUser(v.user, nameOf(request), 'make or unmake admin');
      if (!(await ctx.store.setUserAdmin(name, formOf(request)['admin'] === 'true'))) throw new ApiError(404, `no user ${name}`);
      return undefined;
    }),
  );
  app.post(
    '/admin/users/:name/disable',
    form(async (v, request) => {
      await disableAccount(ctx.store, otherUser(v.user, nameOf(request), 'disable'));
      return undefined;
    }),
  );
  app.post(
    '/admin/users/:name/enable',
    form(async (v, request) => {
      await enableAccount(ctx.store, otherUser(v.user, nameOf(request), 'enable'), ctx.now(), false);
      return undefined;
    }),
  );
  app.get('/admin/users/:name/delete', async (request, reply) => {
    const v = await deps.viewerOf(request, reply);
    if (!v) return reply;
    if (!v.user.admin) return notAdmin(reply, v);
    if (!v.session) return admin(v, reply, 403, 'Deleting a user needs a browser session: sign in.');
    try {
      const name = await existing(otherUser(v.user, nameOf(request), 'delete'));
      const namespaces = (await ctx.store.listNamespaces(name)).map((n) => n.name).sort();
      return sendPage(reply, 200, deleteUserPage({ user: v.user.name, csrf: v.session.csrf, name, namespaces }));
    } catch (err) {
      if (err instanceof ApiError) return admin(v, reply, err.statusCode, `${err.message}.`);
      throw err;
    }
  });
  app.post(
    '/admin/users/:name/delete',
    form(async (v, request) => {
      await deleteAccount(ctx.store, await existing(otherUser(v.user, nameOf(request), 'delete')));
      return undefined;
    }),
  );

  const namespaceDeps = (): NamespaceDeps => {
    if (!deps.namespaces) throw new ApiError(503, 'this devtool service cannot act as its users: its operator has not set DEVTOOL_KUBE_SERVER');
    return deps.namespaces;
  };
  app.post(
    '/admin/namespaces/:name/sleep',
    form(async (v, request) => {
      await sleepNamespaceAs(ctx, namespaceDeps(), v.user, nameOf(request));
      return undefined;
    }),
  );
  app.post(
    '/admin/namespaces/:name/wake',
    form(async (v, request) => {
      await wakeNamespaceAs(ctx, namespaceDeps(), v.user, nameOf(request));
      return undefined;
    }),
  );
  app.post(
    '/admin/namespaces/:name/delete',
    form(async (v, request) => {
      await deleteNamespaceAs(ctx, v.user, nameOf(request));
      return undefined;
    }),
  );
}
