/**
 * The devtool service's API, one table: each route's method and path, the schemas of its parts
 * (schemas.ts, TypeBox: JSON Schema objects that carry their TypeScript type) and who may call it.
 * The server (server/routes/) registers and validates its routes from it, the CLI's client
 * (src/service/client.ts) calls any route by its name here, and the OpenAPI document
 * (docs/api/openapi.json, openapi.ts) is generated from it. Every route but the login endpoints is
 * versioned under /api/v1; every refusal is `{ error }`, one line.
 *
 * The CLI's bundles get this module as data, without TypeBox (scripts/build.mjs, `apiAsData`): its
 * plain constants and each route's method, path and text stream mark, which is all a client uses.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
export * from './schemas.ts';
import {
  API_PREFIX,
  BUILD_TUNNEL_PROTOCOL,
  type ErrorBody,
  Info,
  Me,
  type TokenSummary,
  TokenCreateRequest,
  TokenCreated,
  TokenList,
  NamespaceName,
  Namespace,
  NamespaceList,
  type NamespaceSleep,
  NamespaceCreateRequest,
  SecretName,
  SecretList,
  SecretPutRequest,
  SecretValues,
  type AnalyticsRecord,
  AnalyticsBatch,
  AnalyticsAccepted,
  DeviceCodeRequest,
  DeviceCodeAnswer,
  TokenGrantRequest,
  TokenGrantAnswer,
  type OAuthError,
  KubeCredentials,
  PipelineDeployRequest,
  PipelineDestroyRequest,
  type PipelineStatus,
  PipelineRun,
  PipelineParams,
  PreviewDeployRequest,
  PreviewDestroyRequest,
  Preview,
  PreviewList,
  PreviewEndpoints,
  PreviewParams,
  type PreviewScope,
  User,
  UserAdminRequest,
  UserCreated,
  UserCreateRequest,
  UserDeleted,
  UserList,
  UserParams,
} from './schemas.ts';

/** An HTTP method the API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One route: where it is, the schemas of its parts, and who may call it. */
export interface RouteSpec {
  method: HttpMethod;
  /** Fastify syntax: `:param`. */
  url: string;
  summary: string;
  /** false: answered without a token. */
  auth: boolean;
  /** Login and token routes: limited per client address. */
  rateLimited?: boolean;
  params?: TSchema;
  body?: TSchema;
  /** Status of a success, and its body (undefined: no body). 101: the connection is upgraded to a byte stream. */
  status: 101 | 200 | 201 | 202 | 204;
  response?: TSchema;
  /** The success body is text/plain, streamed while it is written (no response schema). */
  textStream?: true;
}

const route = <R extends RouteSpec>(r: R): R => r;
const NameParam = Type.Object({ name: NamespaceName });

export const routes = {
  info: route({ method: 'GET', url: `${API_PREFIX}/info`, summary: 'What this service is and offers', auth: false, status: 200, response: Info }),
  me: route({ method: 'GET', url: `${API_PREFIX}/me`, summary: 'The user the token belongs to', auth: true, status: 200, response: Me }),
  createToken: route({
    method: 'POST',
    url: `${API_PREFIX}/tokens`,
    summary: 'Create an API token; the answer is the only time it is shown',
    auth: true,
    rateLimited: true,
    body: TokenCreateRequest,
    status: 201,
    response: TokenCreated,
  }),
  listTokens: route({ method: 'GET', url: `${API_PREFIX}/tokens`, summary: 'The tokens, without secrets', auth: true, status: 200, response: TokenList }),
  revokeToken: route({
    method: 'DELETE',
    url: `${API_PREFIX}/tokens/:id`,
    summary: 'Revoke a token; it is refused from then on',
    auth: true,
    rateLimited: true,
    params: Type.Object({ id: Type.String({ pattern: '^[a-f0-9]{1,64}$' }) }),
    status: 204,
  }),
  listNamespaces: route({
    method: 'GET',
    url: `${API_PREFIX}/namespaces`,
    summary: "The user's namespaces, with their status",
    auth: true,
    status: 200,
    response: NamespaceList,
  }),
  createNamespace: route({
    method: 'POST',
    url: `${API_PREFIX}/namespaces`,
    summary: 'Create a namespace the user owns',
    auth: true,
    body: NamespaceCreateRequest,
    status: 201,
    response: Namespace,
  }),
  deleteNamespace: route({
    method: 'DELETE',
    url: `${API_PREFIX}/namespaces/:name`,
    summary: 'Delete a namespace (its owner or an admin); it is Terminating until Kubernetes has removed its contents',
    auth: true,
    params: NameParam,
    status: 202,
  }),
  sleepNamespace: route({
    method: 'POST',
    url: `${API_PREFIX}/namespaces/:name/sleep`,
    summary:
      'Put a namespace to sleep (its owner or an admin): Deployments and StatefulSets scaled to zero keeping their replicas, CronJobs suspended; ' +
      'nothing changes when it sleeps already',
    auth: true,
    params: NameParam,
    status: 200,
    response: Namespace,
  }),
  wakeNamespace: route({
    method: 'POST',
    url: `${API_PREFIX}/namespaces/:name/wake`,
    summary: 'Wake a namespace (its owner or an admin): its workloads get back the replicas they had, its CronJobs their own suspend; Waking until available',
    auth: true,
    params: NameParam,
    status: 200,
    response: Namespace,
  }),
  listSecrets: route({
    method: 'GET',
    url: `${API_PREFIX}/secrets`,
    summary: 'Names of stored secrets, never values',
    auth: true,
    status: 200,
    response: SecretList,
  }),
  putSecret: route({
    method: 'PUT',
    url: `${API_PREFIX}/secrets/:name`,
    summary: 'Store a secret (create or replace)',
    auth: true,
    params: Type.Object({ name: SecretName }),
    body: SecretPutRequest,
    status: 204,
  }),
  deleteSecret: route({
    method: 'DELETE',
    url: `${API_PREFIX}/secrets/:name`,
    summary: 'Delete a stored secret',
    auth: true,
    params: Type.Object({ name: SecretName }),
    status: 204,
  }),
  secretValues: route({
    method: 'GET',
    url: `${API_PREFIX}/secret-values`,
    summary: "The user's stored secrets with their values, for deploy's ${NAME} (the user's own token only)",
    auth: true,
    status: 200,
    response: SecretValues,
  }),
  // analytics and metrics
  sendAnalytics: route({
    method: 'POST',
    url: `${API_PREFIX}/analytics`,
    summary: "A batch of the CLI's analytics records, counted on GET /metrics; a token, when sent, must be valid (anonymous records are accepted)",
    auth: false,
    rateLimited: true,
    body: AnalyticsBatch,
    status: 202,
    response: AnalyticsAccepted,
  }),
  // login (browser, device code, pages)
  deviceCode: route({
    method: 'POST',
    url: '/auth/device/code',
    summary: 'Start a device-code login (RFC 8628); JSON or form body',
    auth: false,
    rateLimited: true,
    body: DeviceCodeRequest,
    status: 200,
    response: DeviceCodeAnswer,
  }),
  tokenGrant: route({
    method: 'POST',
    url: '/auth/token',
    summary: 'Exchange an authorization code (with its PKCE verifier) or an approved device code for an API token; refusals are { error, error_description }',
    auth: false,
    rateLimited: true,
    body: TokenGrantRequest,
    status: 200,
    response: TokenGrantAnswer,
  }),
  // cluster credentials
  kubeCredentials: route({
    method: 'POST',
    url: `${API_PREFIX}/kube-credentials`,
    summary: "Short-lived Kubernetes credentials of the user's own ServiceAccount (its namespaces' rights, nothing else)",
    auth: true,
    status: 200,
    response: KubeCredentials,
  }),
  // hosted builds
  buildTunnel: route({
    method: 'GET',
    url: `${API_PREFIX}/builds/tunnel`,
    summary:
      `With Connection: Upgrade and Upgrade: ${BUILD_TUNNEL_PROTOCOL}, a byte stream to the cluster's ` +
      "BuildKit daemon (gRPC, as BuildKit's client speaks it); without them 426. " +
      'Only when the service announces the builds capability (else 503)',
    auth: true,
    status: 101,
  }),
  // pipelines
  deployPipeline: route({
    method: 'POST',
    url: `${API_PREFIX}/pipelines`,
    summary: "Start a pipeline run: a Job clones the repository and runs devtool deploy with the caller's credentials and stored secrets; 409 while one runs",
    auth: true,
    body: PipelineDeployRequest,
    status: 202,
    response: PipelineRun,
  }),
  destroyPipeline: route({
    method: 'POST',
    url: `${API_PREFIX}/pipelines/:namespace/:name/destroy`,
    summary: 'Start a run of devtool destroy for a pipeline (same repository, branch and file); its record is removed once it succeeds',
    auth: true,
    params: PipelineParams,
    body: PipelineDestroyRequest,
    status: 202,
    response: PipelineRun,
  }),
  getPipeline: route({
    method: 'GET',
    url: `${API_PREFIX}/pipelines/:namespace/:name`,
    summary: "A pipeline's last run, its status brought up to date from its Job",
    auth: true,
    params: PipelineParams,
    status: 200,
    response: PipelineRun,
  }),
  pipelineLog: route({
    method: 'GET',
    url: `${API_PREFIX}/pipelines/:namespace/:name/log`,
    summary: 'The output of the last run as text/plain, streamed while the run goes on; ends when the runner ends',
    auth: true,
    params: PipelineParams,
    status: 200,
    textStream: true,
  }),
  // preview environments
  deployPreview: route({
    method: 'POST',
    url: `${API_PREFIX}/previews`,
    summary:
      'Deploy a preview environment: its namespace (created on the first deploy) and a pipeline run there; global ones only by admins; ' +
      '409 when the name is taken (in either scope) or a run is going on',
    auth: true,
    body: PreviewDeployRequest,
    status: 202,
    response: Preview,
  }),
  listPreviews: route({
    method: 'GET',
    url: `${API_PREFIX}/previews`,
    summary: "The caller's preview environments and the global ones, with their status",
    auth: true,
    status: 200,
    response: PreviewList,
  }),
  getPreview: route({
    method: 'GET',
    url: `${API_PREFIX}/previews/:name`,
    summary: 'A preview environment with its status',
    auth: true,
    params: PreviewParams,
    status: 200,
    response: Preview,
  }),
  destroyPreview: route({
    method: 'POST',
    url: `${API_PREFIX}/previews/:name/destroy`,
    summary: 'Destroy a preview environment: a run of devtool destroy, then its namespace; a global one only by admins',
    auth: true,
    params: PreviewParams,
    body: PreviewDestroyRequest,
    status: 202,
    response: Preview,
  }),
  previewEndpoints: route({
    method: 'GET',
    url: `${API_PREFIX}/previews/:name/endpoints`,
    summary: "The public URLs of a preview environment (its namespace's Ingress hosts)",
    auth: true,
    params: PreviewParams,
    status: 200,
    response: PreviewEndpoints,
  }),
  sleepPreview: route({
    method: 'POST',
    url: `${API_PREFIX}/previews/:name/sleep`,
    summary: "Scale a preview environment's Deployments and StatefulSets to zero, keeping their replicas to wake it; a global one only by admins",
    auth: true,
    params: PreviewParams,
    status: 200,
    response: Preview,
  }),
  wakePreview: route({
    method: 'POST',
    url: `${API_PREFIX}/previews/:name/wake`,
    summary: 'Give a sleeping preview environment its workloads back, with the replicas they had',
    auth: true,
    params: PreviewParams,
    status: 200,
    response: Preview,
  }),
  // users (admins only; a plain user is refused with 403)
  listUsers: route({
    method: 'GET',
    url: `${API_PREFIX}/users`,
    summary: 'Every user of the service, admins and disabled ones included (admins only)',
    auth: true,
    status: 200,
    response: UserList,
  }),
  createUser: route({
    method: 'POST',
    url: `${API_PREFIX}/users`,
    summary: 'Create a user with its personal namespace and a first API token, shown only in this answer (admins only)',
    auth: true,
    body: UserCreateRequest,
    status: 201,
    response: UserCreated,
  }),
  setUserAdmin: route({
    method: 'PUT',
    url: `${API_PREFIX}/users/:name/admin`,
    summary: "Make a user an admin, or take it back (admins only; never one's own account)",
    auth: true,
    params: UserParams,
    body: UserAdminRequest,
    status: 200,
    response: User,
  }),
  disableUser: route({
    method: 'POST',
    url: `${API_PREFIX}/users/:name/disable`,
    summary: 'Disable a user (admins only): its tokens are deleted, and its sessions, sign-ins and any token are refused; its namespaces stay',
    auth: true,
    params: UserParams,
    status: 200,
    response: User,
  }),
  enableUser: route({
    method: 'POST',
    url: `${API_PREFIX}/users/:name/enable`,
    summary: 'Enable a disabled user again (admins only); it signs in again, or gets a token from the operator',
    auth: true,
    params: UserParams,
    status: 200,
    response: User,
  }),
  deleteUser: route({
    method: 'DELETE',
    url: `${API_PREFIX}/users/:name`,
    summary: 'Delete a user (admins only) and every namespace it owns, its previews included; its access ends first',
    auth: true,
    params: UserParams,
    status: 200,
    response: UserDeleted,
  }),
} as const satisfies Record<string, RouteSpec>;

export type RouteName = keyof typeof routes;
export type Routes = typeof routes;

/** What a call of route N sends: its path parameters and its body, typed from their schemas. */
export type RouteInput<N extends RouteName> = (Routes[N] extends { params: infer P extends TSchema } ? { params: Static<P> } : unknown) &
  (Routes[N] extends { body: infer B extends TSchema } ? { body: Static<B> } : unknown);
export type RouteAnswer<N extends RouteName> = Routes[N] extends { response: infer R extends TSchema } ? Static<R> : undefined;

export type InfoBody = Static<typeof Info>;
export type MeBody = Static<typeof Me>;
export type TokenSummaryBody = Static<typeof TokenSummary>;
export type TokenCreateBody = Static<typeof TokenCreateRequest>;
export type TokenCreatedBody = Static<typeof TokenCreated>;
export type TokenListBody = Static<typeof TokenList>;
export type NamespaceBody = Static<typeof Namespace>;
export type NamespaceListBody = Static<typeof NamespaceList>;
export type NamespaceSleepBody = Static<typeof NamespaceSleep>;
export type SecretListBody = Static<typeof SecretList>;
export type SecretValuesBody = Static<typeof SecretValues>;
export type KubeCredentialsBody = Static<typeof KubeCredentials>;
export type ErrorBodyType = Static<typeof ErrorBody>;
export type AnalyticsRecordBody = Static<typeof AnalyticsRecord>;
export type AnalyticsAcceptedBody = Static<typeof AnalyticsAccepted>;
export type DeviceCodeAnswerBody = Static<typeof DeviceCodeAnswer>;
export type TokenGrantRequestBody = Static<typeof TokenGrantRequest>;
export type TokenGrantAnswerBody = Static<typeof TokenGrantAnswer>;
export type OAuthErrorBody = Static<typeof OAuthError>;
export type PipelineDeployBody = Static<typeof PipelineDeployRequest>;
export type PipelineDestroyBody = Static<typeof PipelineDestroyRequest>;
export type PipelineRunBody = Static<typeof PipelineRun>;
export type PipelineStatusValue = Static<typeof PipelineStatus>;
export type PreviewDeployBody = Static<typeof PreviewDeployRequest>;
export type PreviewDestroyBody = Static<typeof PreviewDestroyRequest>;
export type PreviewBody = Static<typeof Preview>;
export type PreviewListBody = Static<typeof PreviewList>;
export type PreviewEndpointsBody = Static<typeof PreviewEndpoints>;
export type PreviewScopeValue = Static<typeof PreviewScope>;
export type UserBody = Static<typeof User>;
export type UserDeletedBody = Static<typeof UserDeleted>;
export type UserListBody = Static<typeof UserList>;
export type UserCreatedBody = Static<typeof UserCreated>;

/** Capabilities this version of the contract defines; `GET /info` lists those the server offers. */
export const CAPABILITIES = ['tokens', 'namespaces', 'secrets', 'analytics', 'login', 'kube-credentials', 'pipelines', 'previews', 'users'] as const;
/** Offered only when the chart configured a builder (GET /info lists it then): the build tunnel. */
export const BUILDS_CAPABILITY = 'builds';
