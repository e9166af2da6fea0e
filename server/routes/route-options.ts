/** Route options from the contract's entries (api/routes.ts). */
import { type TNull, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { isDnsLabel } from '../../api/dns-label.ts';
import { ErrorBody, PERSONAL_SUFFIX, type RouteSpec } from '../../api/routes.ts';
import type { Authenticator } from '../auth.ts';
import { ApiError } from '../errors.ts';

/** The reply schemas of a route, typed per status so that the type provider checks each handler's answer. */
type Replies<R extends RouteSpec> = (R extends { response: infer S extends TSchema } ? { [K in R['status']]: S } : { [K in R['status']]: TNull }) & {
  '4xx': typeof ErrorBody;
  '5xx': typeof ErrorBody;
};

/**
 * A route's options from its contract entry: schemas, the token check, the rate limit. `parts` are
 * its body and params schemas, passed as they are so that the type provider types the handler.
 */
export function routeOptions<R extends RouteSpec, P extends { body?: TSchema; params?: TSchema }>(r: R, auth: Authenticator, parts?: P) {
  const response = { [r.status]: r.response ?? Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody } as Replies<R>;
  return {
    schema: { ...(parts as P), summary: r.summary, response },
    // onRequest: the token is checked before the body is read or validated.
    ...(r.auth ? { onRequest: auth } : {}),
    ...(r.rateLimited ? { config: { rateLimit: {} } } : {}),
  };
}

/**
 * A preValidation hook for a pipeline deploy: a body with neither a repository nor `reuseParams:
 * true` (which its schema refuses too) is refused in words that say what to send.
 */
export async function requireRepository(request: FastifyRequest): Promise<void> {
  const body = request.body as { repository?: unknown; reuseParams?: unknown } | undefined;
  if (body && typeof body === 'object' && body.repository === undefined && body.reuseParams !== true) {
    throw new ApiError(400, "body.repository: required (or reuseParams, to redeploy with the last deploy's)");
  }
}

/**
 * A preValidation hook for a route whose body names a new namespace: a name valid but for the
 * personal-namespace suffix (which its schema refuses too) is refused in words that say why
 * (`namespace web-devtool: names ending in -devtool are ...`), before the schema's line.
 */
export const refusePersonalName =
  (what: string) =>
  async (request: FastifyRequest): Promise<void> => {
    const name = (request.body as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string' && isDnsLabel(name) && name.endsWith(PERSONAL_SUFFIX)) {
      throw new ApiError(400, `${what} ${name}: names ending in ${PERSONAL_SUFFIX} are reserved for personal namespaces`);
    }
  };
