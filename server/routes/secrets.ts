/**
 * Stored secrets: named values a user keeps for `${NAME}` in deploys. Lists give names only; the
 * values come back only from GET /secret-values, to the user's own token (what deploy calls), and
 * never in a log line (the logger redacts `value` and `values`).
 */
import { routes, SECRETS_TOTAL_MAX } from '../../api/routes.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import { routeOptions } from './route-options.ts';

export function registerSecretRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): void {
  const r = routes;
  app.get(r.listSecrets.url, routeOptions(r.listSecrets, auth), async (request) => {
    const names = await ctx.store.secretNames(userOf(request).name);
    return { secrets: names.map((name) => ({ name })) };
  });

  app.put(r.putSecret.url, routeOptions(r.putSecret, auth, { params: r.putSecret.params, body: r.putSecret.body }), async (request, reply) => {
    const user = userOf(request).name;
    const { name } = request.params;
    const others = Object.entries(await ctx.store.secretValues(user)).filter(([n]) => n !== name);
    const total = others.reduce((sum, [n, v]) => sum + n.length + Buffer.byteLength(v), name.length + Buffer.byteLength(request.body.value));
    if (total > SECRETS_TOTAL_MAX) throw new ApiError(413, `stored secrets are limited to ${SECRETS_TOTAL_MAX / 1024} KiB per user in all: delete some first`);
    await ctx.store.putSecret(user, name, request.body.value);
    return reply.code(204).send(null);
  });

  app.delete(r.deleteSecret.url, routeOptions(r.deleteSecret, auth, { params: r.deleteSecret.params }), async (request, reply) => {
    if (!(await ctx.store.deleteSecret(userOf(request).name, request.params.name))) throw new ApiError(404, `no stored secret ${request.params.name}`);
    return reply.code(204).send(null);
  });

  app.get(r.secretValues.url, routeOptions(r.secretValues, auth), async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { values: await ctx.store.secretValues(userOf(request).name) };
  });
}
