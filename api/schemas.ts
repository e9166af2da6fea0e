/**
 * The schemas of the devtool service's API (TypeBox), and its constants: what each route's parts
 * hold, and the limits and rules they check. routes.ts puts them on the routes; the server
 * validates with them, the OpenAPI document shows them, the CLI's client uses only their types.
 */
import { Type } from '@sinclair/typebox';
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN, DNS_LABEL_RULE } from './dns-label.ts';

export const API_PREFIX = '/api/v1';
export const CLI_CLIENT_ID = 'devtool-cli';
/**
 * An analytics record's `action` is a command path ("deploy", "context use"): a label of the
 * service's metrics, so its shape is bounded.
 */
export const ANALYTICS_ACTION_PATTERN = '^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*){0,3}$';
/** The Upgrade protocol of the build tunnel: BuildKit's gRPC stream, carried through the service. */
export const BUILD_TUNNEL_PROTOCOL = 'devtool-buildkit';
/**
 * The header on every answer of the service that names the devtool version it runs: a client
 * learns it from whatever call it makes anyway (the CLI's newer-version notice), no extra request.
 */
export const SERVICE_VERSION_HEADER = 'devtool-version';

/**
 * Names of namespaces, users, pipelines and previews are DNS labels (dns-label.ts). A user's
 * personal namespace is `<user>-devtool`, so a user name has at most 55 characters.
 */
export const PERSONAL_SUFFIX = '-devtool';
export const USER_NAME_MAX = DNS_LABEL_MAX - PERSONAL_SUFFIX.length;
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
    ingressClass: Type.Optional(
      Type.String({ description: "IngressClass the endpoints' Ingresses name (the cluster's own ingress controller); absent: the cluster's default class" }),
    ),
    registry: Type.Optional(Type.String({ description: 'Registry host images are pushed to' })),
    builder: Type.Optional(Type.String({ description: 'Builder address' })),
    certificate: Type.Optional(Type.String({ description: 'PEM of the CA that signs the service and endpoint certificates' })),
  },
  { additionalProperties: false },
);

export const UserName = Type.String({ pattern: DNS_LABEL_PATTERN, minLength: 1, maxLength: USER_NAME_MAX, description: `User name: ${DNS_LABEL_RULE}` });
export const UserParams = Type.Object({ name: UserName });
export const User = Type.Object(
  {
    name: Type.String(),
    admin: Type.Boolean(),
    disabled: Type.Boolean({ description: 'Its tokens, sessions and sign-ins are refused' }),
  },
  { additionalProperties: false },
);
export const UserList = Type.Object({ users: Type.Array(User) }, { additionalProperties: false });
export const UserCreateRequest = Type.Object(
  { name: UserName, admin: Type.Optional(Type.Boolean({ description: 'An admin of the service (default false)' })) },
  { additionalProperties: false },
);
export const UserCreated = Type.Object(
  {
    name: Type.String(),
    admin: Type.Boolean(),
    namespace: Type.String({ description: 'The personal namespace, created with the account' }),
    token: Type.String({ description: 'Its first API token; shown only here' }),
  },
  { additionalProperties: false },
);
export const UserAdminRequest = Type.Object(
  { admin: Type.Boolean({ description: 'true: make the user an admin; false: take it back' }) },
  { additionalProperties: false },
);
export const UserDeleted = Type.Object(
  {
    name: Type.String(),
    namespaces: Type.Array(Type.String(), { description: 'The namespaces it owned, deleted with it (Terminating until Kubernetes has emptied them)' }),
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

export const NamespaceName = Type.String({
  pattern: DNS_LABEL_PATTERN,
  minLength: 1,
  maxLength: DNS_LABEL_MAX,
  description: `DNS-1123 label: ${DNS_LABEL_RULE}`,
});

/** Absent while the namespace is awake. */
export const NamespaceSleep = Type.Object(
  {
    state: Type.Union([Type.Literal('Sleeping'), Type.Literal('Waking')], {
      description: 'Sleeping: its workloads are scaled to zero and its CronJobs suspended; Waking: woken, its workloads not all available yet',
    }),
    since: Type.String({ format: 'date-time', description: 'Since when it sleeps, or since when it wakes' }),
    by: Type.Optional(Type.String({ description: 'Who put it to sleep: a user, or `idle` for the automatic sleep (Sleeping only)' })),
  },
  { additionalProperties: false },
);

export const Namespace = Type.Object(
  {
    name: Type.String(),
    status: Type.Union([Type.Literal('Active'), Type.Literal('Terminating')]),
    owner: Type.String(),
    personal: Type.Boolean({ description: 'The namespace created with the account' }),
    sleep: Type.Optional(NamespaceSleep),
    sleepsAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "When the service puts it to sleep for being idle, unless it is used before (the chart's sleep.afterIdle)",
      }),
    ),
    deletesAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "When the service deletes it for being idle, unless it is used before (the chart's sleep.deleteAfterIdle)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const NamespaceList = Type.Object({ namespaces: Type.Array(Namespace) }, { additionalProperties: false });
/** A namespace a user creates: any name but a personal namespace's (`<user>-devtool`), which its account gets. */
const NOT_PERSONAL = { pattern: `${PERSONAL_SUFFIX}$`, description: `names ending in ${PERSONAL_SUFFIX} are reserved for personal namespaces` };
export const NewNamespaceName = Type.String({
  pattern: DNS_LABEL_PATTERN,
  not: NOT_PERSONAL,
  minLength: 1,
  maxLength: DNS_LABEL_MAX,
  description: `DNS-1123 label: ${DNS_LABEL_RULE}`,
});
export const NamespaceCreateRequest = Type.Object({ name: NewNamespaceName }, { additionalProperties: false });

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

/** One analytics record, the fields docs/configuration.md lists (`action`: ANALYTICS_ACTION_PATTERN). */
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
    grant_type: Type.Union([Type.Literal('authorization_code'), Type.Literal(DEVICE_GRANT_TYPE)], {
      description: `authorization_code (with code_verifier) or ${DEVICE_GRANT_TYPE}`,
    }),
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
/** What `pipeline deploy` asks for. The repository is an HTTPS URL: never SSH (docs/decisions/0123-pipelines-https-only.md). */
export const PIPELINE_LOG_MAX = 64 * 1024;
export const PipelineName = Type.String({
  pattern: DNS_LABEL_PATTERN,
  minLength: 1,
  maxLength: 40,
  description: `Pipeline name (40 characters at most): ${DNS_LABEL_RULE}`,
});
const RepositoryUrl = Type.String({ pattern: '^https://[^\\s@/]+/\\S*$', maxLength: 2048, description: 'HTTPS URL of the repository, without credentials' });
export const PipelineDeployRequest = Type.Object(
  {
    namespace: NamespaceName,
    name: PipelineName,
    repository: Type.Optional(RepositoryUrl),
    branch: Type.Optional(
      Type.String({ pattern: '^[^\\s~^:?*\\[\\\\]+$', maxLength: 255, description: "Branch to deploy; the repository's default branch when absent" }),
    ),
    file: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Manifest location in the repository' })),
    variables: Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*=', maxLength: 16 * 1024 }), { maxItems: 100, description: 'NAME=VALUE, as --var' }),
    timeoutSeconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'The Job is stopped after this long (activeDeadlineSeconds)' }),
    skipIfExists: Type.Boolean({ description: 'Do nothing when the pipeline is already deployed in the namespace' }),
    reuseParams: Type.Optional(
      Type.Boolean({ description: "Take what is not given (repository, branch, file, and the variables when none are given) from the last deploy's" }),
    ),
  },
  {
    additionalProperties: false,
    // A repository, or the last deploy's (reuseParams).
    anyOf: [{ required: ['repository'] }, { required: ['reuseParams'], properties: { reuseParams: { const: true } } }],
  },
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

// preview environments
export const PreviewName = Type.String({
  pattern: DNS_LABEL_PATTERN,
  minLength: 1,
  maxLength: DNS_LABEL_MAX,
  description: `Preview environment name, also its namespace's (${DNS_LABEL_MAX} characters at most): ${DNS_LABEL_RULE}`,
});
export const PreviewScope = Type.Union([Type.Literal('personal'), Type.Literal('global')], {
  description: 'personal: only its creator reaches it; global: every user of the service does, and only admins deploy or destroy it',
});
export const PreviewDeployRequest = Type.Object(
  {
    name: Type.String({ ...PreviewName, not: NOT_PERSONAL }),
    scope: PreviewScope,
    repository: RepositoryUrl,
    branch: PipelineDeployRequest.properties.branch,
    file: PipelineDeployRequest.properties.file,
    sourceUrl: Type.Optional(Type.String({ pattern: '^https://\\S+$', maxLength: 2048, description: 'HTTPS URL of the pull or merge request' })),
    variables: PipelineDeployRequest.properties.variables,
    timeoutSeconds: PipelineDeployRequest.properties.timeoutSeconds,
  },
  { additionalProperties: false },
);
export const PreviewDestroyRequest = Type.Object(
  { timeoutSeconds: Type.Integer({ minimum: 1, maximum: 86_400, description: "The destroy run's Job is stopped after this long" }) },
  { additionalProperties: false },
);
export const PreviewStatus = Type.Union([
  Type.Literal('progressing'),
  Type.Literal('deployed'),
  Type.Literal('sleeping'),
  Type.Literal('error'),
  Type.Literal('destroying'),
]);
export const Preview = Type.Object(
  {
    name: Type.String(),
    scope: PreviewScope,
    owner: Type.String({ description: 'Who created it' }),
    status: PreviewStatus,
    pipeline: Type.String({ description: 'The pipeline that deploys it, in the namespace of the same name as the preview' }),
    repository: Type.Optional(Type.String()),
    branch: Type.Optional(Type.String({ description: 'As asked; when none was, the default branch the last run cloned (known once it has ended)' })),
    commit: Type.Optional(Type.String()),
    file: Type.Optional(Type.String()),
    sourceUrl: Type.Optional(Type.String()),
    createdAt: Type.Optional(Type.String({ format: 'date-time' })),
    deployedAt: Type.String({ format: 'date-time', description: 'The last deploy asked for' }),
    job: Type.Optional(Type.String({ description: 'The Job of the last run, while it runs' })),
    message: Type.Optional(Type.String({ description: 'Why it failed, or why it is being destroyed, one line' })),
  },
  { additionalProperties: false },
);
export const PreviewList = Type.Object({ previews: Type.Array(Preview) });
export const PreviewEndpoints = Type.Object({ endpoints: Type.Array(Type.String({ description: 'https://...' })) });
export const PreviewParams = Type.Object({ name: PreviewName });
