/**
 * Who looks at a dashboard page and what a page answers when it cannot show one: the viewer is the
 * signed-in browser session's user, or the user of an `Authorization: Bearer` API token (never a
 * pipeline run's); a namespace the viewer cannot read is the same one-line 404 as one that does not
 * exist.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateToken } from '../auth.ts';
import { type BrowserSession, currentSession } from '../browser-sessions.ts';
import { ApiError } from '../errors.ts';
import { html, page } from '../pages/html.ts';
import type { ServiceDeps } from '../service-deps.ts';
import type { NamespaceRecord, UserRecord } from '../store/store.ts';
import { requireSession, sendPage } from './login-pages.ts';

/** Who looks at a page: a browser session (with its CSRF token), or an API token's user. */
export interface Viewer {
  user: UserRecord;
  session?: BrowserSession;
  /** Still signed in (the session or the token still valid)? Asked again while a live stream is open. */
  stillValid(): Promise<boolean>;
}

export async function viewerOf(ctx: ServiceDeps, request: FastifyRequest, reply: FastifyReply): Promise<Viewer | undefined> {
  const header = request.headers.authorization;
  if (header) {
    const origin = `${request.protocol}://${request.host}`;
    try {
      const { user, token } = await authenticateToken(ctx, header, origin);
      if (token.scope === 'run') throw new ApiError(403, "a pipeline run's token cannot open the dashboard: use your own token");
      return {
        user,
        stillValid: () =>
          authenticateToken(ctx, header, origin).then(
            () => true,
            () => false,
          ),
      };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      sendPage(reply, err.statusCode, page({ title: 'Not signed in', error: err.message, body: html`<p><a href="/login">Sign in</a></p>` }));
      return undefined;
    }
  }
  const session = await requireSession(ctx, request, reply);
  if (!session) return undefined;
  const user = await ctx.store.getUser(session.user);
  if (!user || user.disabled) {
    sendPage(reply, 403, page({ title: 'Account disabled', error: 'This account is disabled: ask the operator of this service.', body: html`` }));
    return undefined;
  }
  return { user, session, stillValid: async () => (await currentSession(ctx, request))?.id === session.id };
}

/** Never says whether a namespace the viewer cannot read exists. */
export function noSuchNamespace(reply: FastifyReply, v: Viewer, name: string): FastifyReply {
  return sendPage(
    reply,
    404,
    page({
      title: 'No such namespace',
      ...signedInOf(v),
      error: `There is no namespace ${name} that you can see.`,
      body: html`<p><a href="/">Home</a></p>`,
    }),
  );
}

/** Without users' cluster credentials the service can read nothing in a namespace. */
export function noClusterCredentials(reply: FastifyReply, v: Viewer): FastifyReply {
  const error = 'This devtool service hands out no Kubernetes credentials (its operator has not set DEVTOOL_KUBE_SERVER): it cannot show a namespace.';
  return sendPage(reply, 503, page({ title: 'Namespace pages unavailable', ...signedInOf(v), error, body: html`<p><a href="/">Home</a></p>` }));
}

export const csrfOf = (v: Viewer) => (v.session ? { csrf: v.session.csrf } : {});

/** Whom a page is for: its navigation (Admin for an admin, on every page) and its forms' CSRF token. */
export const signedInOf = (v: Viewer) => ({ user: v.user.name, admin: v.user.admin, ...csrfOf(v) });

/** Environments a pipeline of the service deploys: the preview's own, and those with a run record. */
export async function pipelinesOf(ctx: ServiceDeps, ns: NamespaceRecord, names: readonly string[], known: Map<string, boolean>): Promise<Set<string>> {
  await Promise.all(
    names.filter((n) => !known.has(n)).map(async (n) => known.set(n, ns.preview?.pipeline === n || (await ctx.store.runs.getRecord(ns.name, n)) !== undefined)),
  );
  return new Set(names.filter((n) => known.get(n)));
}
