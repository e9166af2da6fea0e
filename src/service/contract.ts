/**
 * The devtool service's API: one contract that the server (server/) registers its routes from,
 * the CLI's client (client.ts) calls through, and the OpenAPI document (docs/api/openapi.json) is
 * generated from. Every route is versioned under /api/v1; every 4xx answer is `{ error }`, one line.
 * Schemas are TypeBox (JSON Schema objects that carry their TypeScript type), validated by the
 * server's ajv. Each route's method and path come from endpoints.ts, the TypeBox-free table the
 * client imports (it takes only types from here).
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ANALYTICS_ACTION_PATTERN, API_PREFIX, BUILD_TUNNEL_PROTOCOL, CLI_CLIENT_ID, type Endpoint, type EndpointName, endpoints } from './endpoints.ts';

export { ANALYTICS_ACTION_PATTERN, API_PREFIX, BUILD_TUNNEL_PROTOCOL, CLI_CLIENT_ID };

/**
 * DNS-1123 label: what Kubernetes accepts as a namespace name. Also the rule for user names, whose
 * personal namespace is `<user>-devtool` (so a user name has at most 55 characters).
 */
export const NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const NAME_RULE = "lowercase letters, digits and '-', starting and ending with a letter or digit";
export const PERSONAL_SUFFIX = '-devtool';
export const USER_NAME_MAX = 63 - PERSONAL_SUFFIX.length;
/** Stored secrets are referenced as `${NAME}` in Compose files: an environment variable's name. */
export const SECRET_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
export const SECRET_NAME_RULE = "letters, digits and '_', not starting with a digit";
/**
 * A user's stored secrets are one Kubernetes Secret, capped at 1 MiB with its base64: 700 KiB of
 * names and values in all (933 KiB once encoded), 64 KiB for one value.
 */
export const SECRET_VALUE_MAX = 64 * 1024;
export const SECRETS_TOTAL_MAX = 700 * 1024;

/** Every 4xx and 5xx answer. */
export const ErrorBody = Type.Object({ error: Type.String({ description: 'What went wrong, one line' }) });

export const Info = Type.Object(
  {
    version: Type.String({ description: 'Version of the service program' }),
    apiVersion: Type.Literal('v1'),
    capabilities: Type.Array(Type.String(), { description: 'Features this service offers; a client checks here, never in error texts' }),
    endpointDomain: Type.Optional(Type.String({ description: 'Domain under which endpoints are exposed: https://<name>-<namespace>.<domain>' })),
    registry: Type.Optional(Type.String({ description: 'Registry host images are pushed to' })),
    builder: Type.Optional(Type.String({ description: 'Builder address' })),
    certificate: Type.Optional(Type.String({ description: 'PEM of the CA that signs the service and endpoint certificates' })),
  },
  { additionalProperties: false },
);

export const Me = Type.Object(
  {
    name: Type.String(),
    admin: Type.Boolean(),
    namespace: Type.String({ description: 'The personal namespace, created with the account' }),
  },
  { additionalProperties: false },
);

export const TokenSummary = Type.Object(
  {
    id: Type.String({ description: 'Names the token for revocation; not a secret' }),
    name: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export const TokenCreateRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'What the token is for' }),
    expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'No expiry when absent' })),
  },
  { additionalProperties: false },
);

export const TokenCreated = Type.Composite([TokenSummary, Type.Object({ token: Type.String({ description: 'The API token; shown only here' }) })], {
  additionalProperties: false,
});

export const TokenList = Type.Object({ tokens: Type.Array(TokenSummary) }, { additionalProperties: false });

export const NamespaceName = Type.String({ pattern: NAME_PATTERN, minLength: 1, maxLength: 63, description: `DNS-1123 label: ${NAME_RULE}` });

export const Namespace = Type.Object(
  {
    name: Type.String(),
    status: Type.Union([Type.Literal('Active'), Type.Literal('Terminating')]),
    owner: Type.String(),
    personal: Type.Boolean({ description: 'The namespace created with the account' }),
  },
  { additionalProperties: false },
);

export const NamespaceList = Type.Object({ namespaces: Type.Array(Namespace) }, { additionalProperties: false });
export const NamespaceCreateRequest = Type.Object({ name: NamespaceName }, { additionalProperties: false });

export const SecretName = Type.String({ pattern: SECRET_NAME_PATTERN, minLength: 1, maxLength: 253, description: SECRET_NAME_RULE });
export const SecretList = Type.Object(
  { secrets: Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: false })) },
  { additionalProperties: false },
);
export const SecretPutRequest = Type.Object({ value: Type.String({ maxLength: SECRET_VALUE_MAX }) }, { additionalProperties: false });
export const SecretValues = Type.Object(
  { values: Type.Record(Type.String(), Type.String(), { description: 'Name to value' }) },
  { additionalProperties: false },
);

/** One analytics record, as the reference lists its fields (`action`: ANALYTICS_ACTION_PATTERN, endpoints.ts). */
export const ANALYTICS_BATCH_MAX = 100;
export const AnalyticsRecord = Type.Object(
  {
    action: Type.String({ pattern: ANALYTICS_ACTION_PATTERN, maxLength: 80, description: 'The command path, e.g. "context use"' }),
    timestamp: Type.String({ format: 'date-time', maxLength: 40 }),
    version: Type.String({ maxLength: 64, description: 'CLI version' }),
    os: Type.String({ maxLength: 64 }),
    machineId: Type.String({ maxLength: 64, description: 'Anonymous machine ID' }),
    actionId: Type.String({ maxLength: 64, description: 'Correlates the actions of one command execution' }),
    success: Type.Boolean(),
    userId: Type.Optional(Type.String({ maxLength: 64, description: 'The user, when logged in' })),
  },
  { additionalProperties: false },
);
export const AnalyticsBatch = Type.Object(
  { records: Type.Array(AnalyticsRecord, { minItems: 1, maxItems: ANALYTICS_BATCH_MAX }) },
  { additionalProperties: false },
);
export const AnalyticsAccepted = Type.Object({ accepted: Type.Integer({ minimum: 0 }) }, { additionalProperties: false });
// login (browser, device code, pages): the OAuth 2.0 endpoints the CLI calls (RFC 6749, 7636, 8628).
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

export const DeviceCodeRequest = Type.Object(
  {
    client_id: Type.Literal(CLI_CLIENT_ID),
    machine: Type.Optional(Type.String({ maxLength: 64, description: 'Names the API token the login makes: "devtool CLI on <machine>"' })),
  },
  { additionalProperties: false },
);

export const DeviceCodeAnswer = Type.Object(
  {
    device_code: Type.String(),
    user_code: Type.String({ description: 'What the user types on the device page: XXXX-XXXX' }),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer(),
    interval: Type.Integer(),
  },
  { additionalProperties: false },
);

export const TokenGrantRequest = Type.Object(
  {
    grant_type: Type.String({ description: `authorization_code (with code_verifier) or ${DEVICE_GRANT_TYPE}` }),
    client_id: Type.Optional(Type.String()),
    code: Type.Optional(Type.String({ maxLength: 200 })),
    code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 200 })),
    device_code: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const TokenGrantAnswer = Type.Object(
  {
    access_token: Type.String({ description: 'An API token, listed and revocable like any other' }),
    token_type: Type.Literal('Bearer'),
    user: Type.String(),
  },
  { additionalProperties: false },
);

/** The token endpoint's refusals, as RFC 6749 section 5.2 spells them (the code a client acts on, and one line). */
export const OAuthError = Type.Object({ error: Type.String(), error_description: Type.String() }, { additionalProperties: false });

/** Short-lived Kubernetes credentials of the user's own ServiceAccount: its rights are exactly its RoleBindings. */
export const KubeCredentials = Type.Object(
  {
    server: Type.String({ description: 'URL of the Kubernetes API server, as users reach it' }),
    certificateAuthority: Type.String({ description: "PEM of the CA that signs the API server's certificate" }),
    token: Type.String({ description: "A bound ServiceAccount token (TokenRequest) of the user's own ServiceAccount" }),
    expiresAt: Type.String({ format: 'date-time', description: 'When the token stops working; ask again before then' }),
  },
  { additionalProperties: false },
);

// pipelines
/** What `pipeline deploy` asks for. The repository is an HTTPS URL: never SSH (docs/decisions.md, "Pipelines"). */
export const PIPELINE_LOG_MAX = 64 * 1024;
export const PipelineName = Type.String({
  pattern: NAME_PATTERN,
  minLength: 1,
  maxLength: 40,
  description: `Pipeline name (40 characters at most): ${NAME_RULE}`,
});
export const PipelineDeployRequest = Type.Object(
  {
    namespace: NamespaceName,
    name: PipelineName,
    repository: Type.String({ pattern: '^https://[^\\s@/]+/\\S*$', maxLength: 2048, description: 'HTTPS URL of the repository, without credentials' }),
    branch: Type.Optional(
      Type.String({ pattern: '^[^\\s~^:?*\\[\\\\]+$', maxLength: 255, description: "Branch to deploy; the repository's default branch when absent" }),
    ),
    file: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Manifest location in the repository' })),
    variables: Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*=', maxLength: 16 * 1024 }), { maxItems: 100, description: 'NAME=VALUE, as --var' }),
    timeoutSeconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'The Job is stopped after this long (activeDeadlineSeconds)' }),
    skipIfExists: Type.Boolean({ description: 'Do nothing when the pipeline is already deployed in the namespace' }),
  },
  { additionalProperties: false },
);
export const PipelineDestroyRequest = Type.Object(
  {
    volumes: Type.Boolean({ description: 'Also destroy persistent volumes' }),
    timeoutSeconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
  },
  { additionalProperties: false },
);
export const PipelineStatus = Type.Union([
  Type.Literal('progressing'),
  Type.Literal('deployed'),
  Type.Literal('error'),
  Type.Literal('destroying'),
  Type.Literal('destroyed'),
]);
export const PipelineRun = Type.Object(
  {
    name: Type.String(),
    namespace: Type.String(),
    status: PipelineStatus,
    action: Type.Union([Type.Literal('deploy'), Type.Literal('destroy')]),
    repository: Type.String(),
    branch: Type.Optional(Type.String({ description: 'As asked; the commit line of the log names the branch cloned' })),
    commit: Type.Optional(Type.String({ description: 'The commit deployed, once the runner has cloned' })),
    file: Type.Optional(Type.String()),
    job: Type.String({ description: 'The Kubernetes Job of this run' }),
    startedAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
    message: Type.Optional(Type.String({ description: 'Why it failed, one line' })),
    skipped: Type.Optional(Type.Boolean({ description: 'skipIfExists found it deployed: nothing ran' })),
    log: Type.Optional(Type.String({ description: `The run's last output, at most ${PIPELINE_LOG_MAX / 1024} KiB, once it has finished` })),
  },
  { additionalProperties: false },
);
export const PipelineParams = Type.Object({ namespace: NamespaceName, name: PipelineName });

/** One route: its method and path (endpoints.ts), the schemas of its parts, and who may call it. */
export interface RouteSpec extends Endpoint {
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
}

const route = <R extends RouteSpec>(r: R): R => r;
const NameParam = Type.Object({ name: NamespaceName });

export const routes = {
  info: route({ ...endpoints.info, summary: 'What this service is and offers', auth: false, status: 200, response: Info }),
  me: route({ ...endpoints.me, summary: 'The user the token belongs to', auth: true, status: 200, response: Me }),
  createToken: route({
    ...endpoints.createToken,
    summary: 'Create an API token; the answer is the only time it is shown',
    auth: true,
    rateLimited: true,
    body: TokenCreateRequest,
    status: 201,
    response: TokenCreated,
  }),
  listTokens: route({ ...endpoints.listTokens, summary: 'The tokens, without secrets', auth: true, status: 200, response: TokenList }),
  revokeToken: route({
    ...endpoints.revokeToken,
    summary: 'Revoke a token; it is refused from then on',
    auth: true,
    rateLimited: true,
    params: Type.Object({ id: Type.String({ pattern: '^[a-f0-9]{1,64}$' }) }),
    status: 204,
  }),
  listNamespaces: route({ ...endpoints.listNamespaces, summary: "The user's namespaces, with their status", auth: true, status: 200, response: NamespaceList }),
  createNamespace: route({
    ...endpoints.createNamespace,
    summary: 'Create a namespace the user owns',
    auth: true,
    body: NamespaceCreateRequest,
    status: 201,
    response: Namespace,
  }),
  deleteNamespace: route({
    ...endpoints.deleteNamespace,
    summary: 'Delete a namespace (its owner or an admin); it is Terminating until Kubernetes has removed its contents',
    auth: true,
    params: NameParam,
    status: 202,
  }),
  listSecrets: route({ ...endpoints.listSecrets, summary: 'Names of stored secrets, never values', auth: true, status: 200, response: SecretList }),
  putSecret: route({
    ...endpoints.putSecret,
    summary: 'Store a secret (create or replace)',
    auth: true,
    params: Type.Object({ name: SecretName }),
    body: SecretPutRequest,
    status: 204,
  }),
  deleteSecret: route({ ...endpoints.deleteSecret, summary: 'Delete a stored secret', auth: true, params: Type.Object({ name: SecretName }), status: 204 }),
  secretValues: route({
    ...endpoints.secretValues,
    summary: "The user's stored secrets with their values, for deploy's ${NAME} (the user's own token only)",
    auth: true,
    status: 200,
    response: SecretValues,
  }),
  // analytics and metrics
  sendAnalytics: route({
    ...endpoints.sendAnalytics,
    summary: "A batch of the CLI's analytics records, counted on GET /metrics; a token, when sent, must be valid (anonymous records are accepted)",
    auth: false,
    rateLimited: true,
    body: AnalyticsBatch,
    status: 202,
    response: AnalyticsAccepted,
  }),
  // login (browser, device code, pages)
  deviceCode: route({
    ...endpoints.deviceCode,
    summary: 'Start a device-code login (RFC 8628); JSON or form body',
    auth: false,
    rateLimited: true,
    body: DeviceCodeRequest,
    status: 200,
    response: DeviceCodeAnswer,
  }),
  tokenGrant: route({
    ...endpoints.tokenGrant,
    summary: 'Exchange an authorization code (with its PKCE verifier) or an approved device code for an API token; refusals are { error, error_description }',
    auth: false,
    rateLimited: true,
    body: TokenGrantRequest,
    status: 200,
    response: TokenGrantAnswer,
  }),
  // cluster credentials
  kubeCredentials: route({
    ...endpoints.kubeCredentials,
    summary: "Short-lived Kubernetes credentials of the user's own ServiceAccount (its namespaces' rights, nothing else)",
    auth: true,
    status: 200,
    response: KubeCredentials,
  }),
  // hosted builds
  buildTunnel: route({
    ...endpoints.buildTunnel,
    summary:
      `With Connection: Upgrade and Upgrade: ${BUILD_TUNNEL_PROTOCOL}, a byte stream to the cluster's ` +
      "BuildKit daemon (gRPC, as BuildKit's client speaks it); without them 426. " +
      'Only when the service announces the builds capability (else 503)',
    auth: true,
    status: 101,
  }),
  // pipelines
  deployPipeline: route({
    ...endpoints.deployPipeline,
    summary: "Start a pipeline run: a Job clones the repository and runs devtool deploy with the caller's credentials and stored secrets; 409 while one runs",
    auth: true,
    body: PipelineDeployRequest,
    status: 202,
    response: PipelineRun,
  }),
  destroyPipeline: route({
    ...endpoints.destroyPipeline,
    summary: 'Start a run of devtool destroy for a pipeline (same repository, branch and file); its record is removed once it succeeds',
    auth: true,
    params: PipelineParams,
    body: PipelineDestroyRequest,
    status: 202,
    response: PipelineRun,
  }),
  getPipeline: route({
    ...endpoints.getPipeline,
    summary: "A pipeline's last run, its status brought up to date from its Job",
    auth: true,
    params: PipelineParams,
    status: 200,
    response: PipelineRun,
  }),
  pipelineLog: route({
    ...endpoints.pipelineLog,
    summary: 'The output of the last run as text/plain, streamed while the run goes on; ends when the runner ends',
    auth: true,
    params: PipelineParams,
    status: 200,
  }),
} as const satisfies Record<EndpointName, RouteSpec>;

export type RouteName = keyof typeof routes;

export type InfoBody = Static<typeof Info>;
export type MeBody = Static<typeof Me>;
export type TokenSummaryBody = Static<typeof TokenSummary>;
export type TokenCreateBody = Static<typeof TokenCreateRequest>;
export type TokenCreatedBody = Static<typeof TokenCreated>;
export type TokenListBody = Static<typeof TokenList>;
export type NamespaceBody = Static<typeof Namespace>;
export type NamespaceListBody = Static<typeof NamespaceList>;
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

/** Capabilities this version of the contract defines; `GET /info` lists those the server offers. */
export const CAPABILITIES = ['tokens', 'namespaces', 'secrets', 'analytics', 'login', 'kube-credentials', 'pipelines'] as const;
/** Offered only when the chart configured a builder (GET /info lists it then): the build tunnel. */
export const BUILDS_CAPABILITY = 'builds';
