/**
 * The bearer-token check of every route that needs a user: the token's hash is looked up in the
 * store, an expired one is refused like a revoked one, and the request carries the user from then on.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceDeps } from './service-deps.ts';
import { ApiError } from './errors.ts';
import { routes } from '../api/routes.ts';
import type { TokenRecord, UserRecord } from './store/store.ts';
import { bearerToken, hashToken, isExpired } from './tokens.ts';

const users = new WeakMap<FastifyRequest, { user: UserRecord; token: TokenRecord }>();

/** The authenticated user of a request that went through the check. */
export function userOf(request: FastifyRequest): UserRecord {
  const u = users.get(request);
  if (!u) throw new ApiError(401, 'not authenticated');
  return u.user;
}

/** The API token a request that went through the check was made with. */
export function tokenOf(request: FastifyRequest): TokenRecord {
  const u = users.get(request);
  if (!u) throw new ApiError(401, 'not authenticated');
  return u.token;
}

/**
 * What a pipeline run's token may do (`scope: run`): what `devtool deploy` and `destroy` need on a
 * service context (cluster credentials, the build tunnel, stored secrets' values, which the run has
 * anyway, analytics), never make or revoke tokens, change secrets or namespaces, or start runs.
 */
export const RUN_TOKEN_ROUTES: readonly { method: string; url: string }[] = [
  routes.me,
  routes.listNamespaces,
  routes.listSecrets,
  routes.secretValues,
  routes.sendAnalytics,
  routes.kubeCredentials,
  routes.buildTunnel,
  routes.getPipeline,
  routes.pipelineLog,
];
const allowedForRun = (method: string, url: string | undefined) => RUN_TOKEN_ROUTES.some((r) => r.method === method && r.url === url);

export type Authenticator = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function authenticator(ctx: ServiceDeps): Authenticator {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    // Without DEVTOOL_PUBLIC_URL, the address this request came to (a service run by hand).
    const found = await authenticateToken(ctx, request.headers.authorization, `${request.protocol}://${request.host}`);
    if (found.token.scope === 'run' && !allowedForRun(request.method, request.routeOptions.url)) {
      throw new ApiError(403, `a pipeline run's token cannot ${request.method} ${request.routeOptions.url ?? request.url}: use your own token`);
    }
    users.set(request, found);
  };
}

/**
 * The user of an `Authorization` header, or an ApiError 401 whose line says how to log in again;
 * also used where no Fastify request exists (the build tunnel's HTTP upgrade).
 */
export async function authenticate(ctx: ServiceDeps, header: string | undefined, requestedUrl: string): Promise<UserRecord> {
  return (await authenticateToken(ctx, header, requestedUrl)).user;
}

/** The user and the token record of an `Authorization` header (authenticate's check). */
export async function authenticateToken(ctx: ServiceDeps, header: string | undefined, requestedUrl: string): Promise<{ user: UserRecord; token: TokenRecord }> {
  const loginHint = () => `log in again with devtool context use ${ctx.config.publicUrl ?? requestedUrl}`;
  if (!header) throw new ApiError(401, `missing API token (Authorization: Bearer): ${loginHint()}`);
  const token = bearerToken(header);
  if (!token) throw new ApiError(401, `not a devtool API token (Authorization: Bearer dvt_...): ${loginHint()}`);
  const record = await ctx.store.findToken(hashToken(token));
  if (!record || isExpired(record, ctx.now())) throw new ApiError(401, `token revoked or expired: ${loginHint()}`);
  const user = await ctx.store.getUser(record.user);
  if (!user) throw new ApiError(401, `the account of this token no longer exists: ${loginHint()}`);
  if (user.disabled) throw new ApiError(401, `the account ${user.name} is disabled: ask the operator of this service`);
  return { user, token: record };
}
