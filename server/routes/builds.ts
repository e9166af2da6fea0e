/**
 * Hosted builds: GET /builds/tunnel. The upgrade itself is handled by build-tunnel.ts (Node hands
 * upgrade requests to the server's 'upgrade' listener, never to Fastify); this route answers the
 * same path without an Upgrade header, so that a client (or a proxy that dropped the header) gets
 * a one-line reason rather than a 404.
 */
import { BUILD_TUNNEL_PROTOCOL, routes } from '../../api/routes.ts';
import type { Authenticator } from '../auth.ts';
import { attachBuildTunnel, type BuildkitUpstream } from '../build-tunnel.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import { routeOptions } from './route-options.ts';

export function registerBuildRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): void {
  const upstream: BuildkitUpstream | undefined = ctx.config.buildkit;
  attachBuildTunnel(app, ctx, upstream);
  const r = routes.buildTunnel;
  app.get(r.url, routeOptions(r, auth), async () => {
    if (!upstream) throw new ApiError(503, 'this devtool service has no builder: install the chart with builder.enabled=true, or build with BUILDKIT_HOST');
    throw new ApiError(426, `the build tunnel needs Connection: Upgrade and Upgrade: ${BUILD_TUNNEL_PROTOCOL} (a proxy on the way may have dropped them)`);
  });
}
