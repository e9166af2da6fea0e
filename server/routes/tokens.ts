/** API tokens: create (shown once), list (never the secret; only those not expired), revoke. Rate-limited per client address. */
import { routes, type TokenSummaryBody } from '../../api/routes.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import { routeOptions } from './route-options.ts';
import type { TokenRecord } from '../store/store.ts';
import { liveTokens, newToken } from '../tokens.ts';

function summary(t: TokenRecord): TokenSummaryBody {
  const s: TokenSummaryBody = { id: t.id, name: t.name, createdAt: t.createdAt };
  if (t.expiresAt) s.expiresAt = t.expiresAt;
  return s;
}

export function registerTokenRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): void {
  const r = routes;
  app.post(r.createToken.url, routeOptions(r.createToken, auth, { body: r.createToken.body }), async (request, reply) => {
    const user = userOf(request);
    const { token, record } = newToken(user.name, request.body.name, ctx.now(), request.body.expiresInDays);
    await ctx.store.addToken(record);
    reply.header('cache-control', 'no-store');
    return reply.code(201).send({ ...summary(record), token });
  });

  app.get(r.listTokens.url, routeOptions(r.listTokens, auth), async (request) => {
    const tokens = await liveTokens(ctx.store, userOf(request).name, ctx.now());
    return { tokens: tokens.map(summary) };
  });

  app.delete(r.revokeToken.url, routeOptions(r.revokeToken, auth, { params: r.revokeToken.params }), async (request, reply) => {
    if (!(await ctx.store.deleteToken(userOf(request).name, request.params.id))) throw new ApiError(404, `no token ${request.params.id} of yours`);
    return reply.code(204).send(null);
  });
}
