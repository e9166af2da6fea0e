/** GET /info (no token: a client learns what the service offers before logging in) and GET /me. */
import { BUILDS_CAPABILITY, CAPABILITIES, type InfoBody, routes } from '../../api/routes.ts';
import { personalNamespace } from '../accounts.ts';
import { type Authenticator, userOf } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { routeOptions } from './route-options.ts';

export function registerInfoRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): void {
  const c = ctx.config;
  app.get(routes.info.url, routeOptions(routes.info, auth), async (): Promise<InfoBody> => {
    const info: InfoBody = { version: c.version, apiVersion: 'v1', capabilities: [...CAPABILITIES, ...(c.buildkit ? [BUILDS_CAPABILITY] : [])] };
    if (c.endpointDomain) info.endpointDomain = c.endpointDomain;
    if (c.ingressClass) info.ingressClass = c.ingressClass;
    if (c.registry) info.registry = c.registry;
    if (c.builder) info.builder = c.builder;
    if (c.certificate) info.certificate = c.certificate;
    return info;
  });

  app.get(routes.me.url, routeOptions(routes.me, auth), async (request) => {
    const user = userOf(request);
    return { name: user.name, admin: user.admin, namespace: personalNamespace(user.name) };
  });
}
