/**
 * The login part of the service (browser pages, the CLI's browser and device-code login), and the
 * service's other pages, in their own Fastify scope: forms are application/x-www-form-urlencoded, parsed here, and an unexpected
 * failure of a page is an HTML page, not JSON.
 */
import type { FastifyError } from 'fastify';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError, oneLine } from '../errors.ts';
import { html, PAGE_HEADERS, page } from '../pages/html.ts';
import { registerLoginOAuth } from './login-oauth.ts';
import { registerLoginPages } from './login-pages.ts';

/** `pages`: the service's other pages (the dashboard's), registered in the same scope. */
export function registerLoginRoutes(app: App, ctx: ServiceDeps, pages?: (scope: App) => void): void {
  app.register(async (scope) => {
    const s = scope as unknown as App;
    s.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 128 * 1024 }, (_req, body, done) => {
      // One value per name (the last): the forms and the token endpoint have no repeated field.
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    s.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
      const status = err instanceof ApiError ? err.statusCode : ((err as FastifyError).statusCode ?? 500);
      const tokenEndpoint = request.url.startsWith('/auth/token');
      const json = tokenEndpoint || request.url.startsWith('/auth/device/code');
      if (status >= 500) request.log.error({ err }, 'request failed');
      const line = status >= 500 ? 'internal error of the devtool service; its log has the details' : oneLine(err.message);
      // The token endpoint answers every 400 (a body that fails its schema or is not JSON at all) in
      // the OAuth error shape its clients parse; its other answers keep the API's one-line shape.
      if (json) return reply.code(status).send(tokenEndpoint && status === 400 ? { error: 'invalid_request', error_description: line } : { error: line });
      return reply
        .code(status)
        .headers(PAGE_HEADERS)
        .send(page({ title: status === 429 ? 'Too many attempts' : 'Request refused', error: line, body: html`<p><a href="/login">Back</a></p>` }));
    });
    registerLoginPages(s, ctx);
    registerLoginOAuth(s, ctx);
    pages?.(s);
  });
}
