/**
 * Analytics and metrics (the CLI sends its records to the current context's service only).
 * POST /api/v1/analytics takes a batch and counts it; anonymous batches are accepted, as a
 * record carries an anonymous machine ID, and a user ID only when logged in, but a token
 * that is sent must be valid. GET /metrics is the Prometheus text of those counts and of every
 * request the service answers (server/metrics.ts), for a scraper that sends the bearer token
 * DEVTOOL_METRICS_TOKEN; without that setting there is no /metrics.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { routes } from '../../api/routes.ts';
import type { Authenticator } from '../auth.ts';
import type { App, ServiceDeps } from '../service-deps.ts';
import { ApiError } from '../errors.ts';
import { Metrics } from '../metrics.ts';
import { routeOptions } from './route-options.ts';

export const METRICS_PATH = '/metrics';

export function registerAnalyticsRoutes(app: App, ctx: ServiceDeps, auth: Authenticator): Metrics {
  const metrics = new Metrics();
  // Every answer, whichever route: the template names it (a path a client made up is "unmatched").
  app.addHook('onResponse', async (request, reply) => {
    metrics.recordRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
  });

  const r = routes.sendAnalytics;
  const optionalAuth = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers.authorization) await auth(request, reply);
  };
  const options = routeOptions(r, auth, { body: r.body });
  app.post(r.url, { ...options, onRequest: optionalAuth }, async (request, reply) => {
    for (const record of request.body.records) metrics.recordAnalytics(record.action, record.success);
    return reply.code(202).send({ accepted: request.body.records.length });
  });

  // Request counts by route say who uses what and when: a scraper shows its token, and without one
  // configured there is no /metrics at all.
  const expected = ctx.config.metricsToken ? digest(ctx.config.metricsToken) : undefined;
  app.get(METRICS_PATH, { logLevel: 'warn' }, async (request, reply) => {
    if (!expected) throw new ApiError(404, 'metrics are off: the operator sets DEVTOOL_METRICS_TOKEN (the chart: service.metricsToken) to turn them on');
    const sent = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!sent || !timingSafeEqual(digest(sent), expected)) throw new ApiError(401, 'metrics need the bearer token of DEVTOOL_METRICS_TOKEN');
    return reply.header('content-type', 'text/plain; version=0.0.4; charset=utf-8').header('cache-control', 'no-store').send(metrics.render());
  });
  return metrics;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
