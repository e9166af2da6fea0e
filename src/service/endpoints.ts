/**
 * The method and path of each route of the devtool service's API, and the plain constants its
 * client needs, without schemas: the CLI's client (client.ts) imports this alone, so calling the
 * service never loads TypeBox (~45 ms of a command's start). contract.ts builds its routes from
 * these entries and adds their schemas, so the server, the OpenAPI document and the client share
 * one table (endpoints.test.ts checks that each contract route kept its entry's method and path).
 */

export const API_PREFIX = '/api/v1';
export const CLI_CLIENT_ID = 'devtool-cli';
/**
 * An analytics record's `action` is a command path ("deploy", "context use"): a label of the
 * service's metrics, so its shape is bounded.
 */
export const ANALYTICS_ACTION_PATTERN = '^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*){0,3}$';

/** The Upgrade protocol of the build tunnel: BuildKit's gRPC stream, carried through the service. */
export const BUILD_TUNNEL_PROTOCOL = 'devtool-buildkit';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Where a route is: its method and path (Fastify syntax, `:param`). */
export interface Endpoint {
  method: HttpMethod;
  url: string;
}

export const endpoints = {
  info: { method: 'GET', url: `${API_PREFIX}/info` },
  me: { method: 'GET', url: `${API_PREFIX}/me` },
  createToken: { method: 'POST', url: `${API_PREFIX}/tokens` },
  listTokens: { method: 'GET', url: `${API_PREFIX}/tokens` },
  revokeToken: { method: 'DELETE', url: `${API_PREFIX}/tokens/:id` },
  listNamespaces: { method: 'GET', url: `${API_PREFIX}/namespaces` },
  createNamespace: { method: 'POST', url: `${API_PREFIX}/namespaces` },
  deleteNamespace: { method: 'DELETE', url: `${API_PREFIX}/namespaces/:name` },
  listSecrets: { method: 'GET', url: `${API_PREFIX}/secrets` },
  putSecret: { method: 'PUT', url: `${API_PREFIX}/secrets/:name` },
  deleteSecret: { method: 'DELETE', url: `${API_PREFIX}/secrets/:name` },
  secretValues: { method: 'GET', url: `${API_PREFIX}/secret-values` },
  // analytics and metrics
  sendAnalytics: { method: 'POST', url: `${API_PREFIX}/analytics` },
  // login (browser, device code, pages)
  deviceCode: { method: 'POST', url: '/auth/device/code' },
  tokenGrant: { method: 'POST', url: '/auth/token' },
  // cluster credentials
  kubeCredentials: { method: 'POST', url: `${API_PREFIX}/kube-credentials` },
  // hosted builds
  buildTunnel: { method: 'GET', url: `${API_PREFIX}/builds/tunnel` },
  // pipelines
  deployPipeline: { method: 'POST', url: `${API_PREFIX}/pipelines` },
  destroyPipeline: { method: 'POST', url: `${API_PREFIX}/pipelines/:namespace/:name/destroy` },
  getPipeline: { method: 'GET', url: `${API_PREFIX}/pipelines/:namespace/:name` },
  pipelineLog: { method: 'GET', url: `${API_PREFIX}/pipelines/:namespace/:name/log` },
  // preview environments
  deployPreview: { method: 'POST', url: `${API_PREFIX}/previews` },
  listPreviews: { method: 'GET', url: `${API_PREFIX}/previews` },
  getPreview: { method: 'GET', url: `${API_PREFIX}/previews/:name` },
  destroyPreview: { method: 'POST', url: `${API_PREFIX}/previews/:name/destroy` },
  previewEndpoints: { method: 'GET', url: `${API_PREFIX}/previews/:name/endpoints` },
  sleepPreview: { method: 'POST', url: `${API_PREFIX}/previews/:name/sleep` },
  wakePreview: { method: 'POST', url: `${API_PREFIX}/previews/:name/wake` },
  // users (admins only)
  disableUser: { method: 'POST', url: `${API_PREFIX}/users/:name/disable` },
  enableUser: { method: 'POST', url: `${API_PREFIX}/users/:name/enable` },
  deleteUser: { method: 'DELETE', url: `${API_PREFIX}/users/:name` },
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof endpoints;
