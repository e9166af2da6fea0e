/**
 * The OpenAPI 3.1 document of the service's API, made from its route table (routes.ts) and nothing
 * else: `npm run openapi` writes it to docs/api/openapi.json, and a unit test fails when that file
 * is stale. TypeBox schemas are JSON Schema already; only the route table needs translating.
 */
import { API_PREFIX, ErrorBody, type RouteSpec, routes, SERVICE_VERSION_HEADER } from './routes.ts';

type Json = Record<string, unknown>;

/** The schema as plain JSON (TypeBox marks its objects with symbol keys, which JSON drops). */
const plain = (schema: unknown): Json => JSON.parse(JSON.stringify(schema)) as Json;

function operation(id: string, r: RouteSpec): Json {
  const op: Json = { operationId: id, summary: r.summary };
  const params = r.params ? (plain(r.params)['properties'] as Record<string, Json>) : {};
  if (Object.keys(params).length > 0) {
    op['parameters'] = Object.entries(params).map(([name, schema]) => ({ name, in: 'path', required: true, schema }));
  }
  if (r.body) op['requestBody'] = { required: true, content: { 'application/json': { schema: plain(r.body) } } };
  const error = { description: 'Refused: the reason, one line', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
  const responses: Record<string, Json> = {
    [String(r.status)]: successOf(r),
    ...(r.auth ? { '401': { ...error, description: 'No token, or a revoked or expired one' } } : {}),
    ...(r.rateLimited ? { '429': { ...error, description: 'Too many requests from this client' } } : {}),
    '4XX': error,
    '5XX': { ...error, description: 'The service failed' },
  };
  // Not required: a proxy in front of the service may answer a 5XX of its own.
  op['responses'] = Object.fromEntries(Object.entries(responses).map(([status, answer]) => [status, { ...answer, headers: VERSION_HEADER }]));
  op['security'] = r.auth ? [{ bearerAuth: [] }] : [];
  return op;
}

const VERSION_HEADER = { [SERVICE_VERSION_HEADER]: { $ref: '#/components/headers/ServiceVersion' } };

function successOf(r: RouteSpec): Json {
  if (r.response) return { description: 'Success', content: { 'application/json': { schema: plain(r.response) } } };
  if (r.textStream) return { description: 'Success: text, streamed while it is written', content: { 'text/plain': { schema: { type: 'string' } } } };
  return { description: 'Success, no body' };
}

export function openApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const [id, r] of Object.entries(routes) as [string, RouteSpec][]) {
    const path = r.url.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: operation(id, r) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'devtool service',
      version: API_PREFIX.split('/').pop(),
      description: 'Generated from api/routes.ts by `npm run openapi`; do not edit.',
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token: dvt_ and 43 base64url characters' } },
      schemas: { ErrorBody: plain(ErrorBody) },
      headers: {
        ServiceVersion: { description: 'The devtool version the service runs (semver), on every answer', schema: { type: 'string' } },
      },
    },
    paths,
  };
}

/** The checked-in text: two-space JSON and a final newline. */
export const openApiText = (): string => `${JSON.stringify(openApiDocument(), null, 2)}\n`;
