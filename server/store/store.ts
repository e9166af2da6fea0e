/**
 * Where the service keeps its state: the narrow interface the handlers use. Two implementations:
 * memory.ts (unit tests of the handlers) and kubernetes.ts (production: every record is a
 * Kubernetes object, so the service itself is stateless and runs with several replicas).
 * The store keeps records; rules (who may do what, token generation, expiry) live in the handlers.
 */
import type { PipelineRunBody } from '../../api/routes.ts';

export interface UserRecord {
  name: string;
  admin: boolean;
  /** Disabled by an operator or admin: none of its tokens, sessions or sign-ins is accepted. */
  disabled?: boolean;
}

/** A token as stored: never the token itself, only its SHA-256. */
export interface TokenRecord {
  /** The first 24 hex characters of the hash: names the token in lists and revocation. */
  id: string;
  /** SHA-256 of the token, hex. */
  hash: string;
  user: string;
  name: string;
  createdAt: string;
  expiresAt?: string;
  /** What it may do: every route (absent), or only what a pipeline run needs (auth.ts RUN_TOKEN_ROUTES). */
  scope?: 'run';
  /**
   * The Kubernetes object holding it (KubeStore): the cluster credentials made from the token are
   * bound to it, so revoking the token (or deleting the account) ends them too.
   */
  objectRef?: { name: string; uid: string };
}

export interface NamespaceRecord {
  name: string;
  owner: string;
  personal: boolean;
  status: 'Active' | 'Terminating';
  /** When Kubernetes made it (ISO 8601). */
  createdAt?: string;
  /** Set on the namespace of a preview environment (server/previews/). */
  preview?: PreviewInfo;
  /** Its sleep, wake and activity marks (server/namespaces/); absent: none. */
  marks?: NamespaceMarks;
}

/** The Namespace annotations of api/namespace-sleep.ts, by field. */
export interface NamespaceMarks {
  sleepingSince?: string;
  wakingSince?: string;
  sleptBy?: string;
  lastRequest?: string;
  wokenAt?: string;
  lastActivity?: string;
}

/** What a watch of namespaces reports (Store.watchNamespaces). */
export interface NamespaceSink {
  /** Every namespace devtool manages: first, and again after any break. */
  reset(records: NamespaceRecord[]): void;
  put(record: NamespaceRecord): void;
  remove(name: string): void;
  /** The watch broke (it lists again after a pause): for the log. */
  broke?(err: unknown): void;
}

/** Marks to change; null removes one. */
export type MarksUpdate = { [K in keyof NamespaceMarks]?: string | null };

/** What a preview environment's namespace records about it besides its owner. */
export interface PreviewInfo {
  scope: 'personal' | 'global';
  /** The pipeline that deploys it in its namespace (named after the repository, fixed at creation). */
  pipeline: string;
  /** The last `preview deploy` (ISO 8601): stale previews are counted from it. */
  deployedAt: string;
  sourceUrl?: string;
  /** Set once a destroy was asked for (ISO 8601): the namespace goes once the destroy run has ended. */
  destroyRequestedAt?: string;
  /** Why it is being destroyed when nobody asked (a stale preview). */
  destroyReason?: string;
  /** Set while its workloads are scaled to zero by `preview sleep` (ISO 8601). */
  sleepingSince?: string;
}

/** Fields of PreviewInfo to change; null removes one. */
export type PreviewUpdate = { [K in 'deployedAt' | 'sourceUrl' | 'destroyRequestedAt' | 'destroyReason' | 'sleepingSince']?: string | null };

export interface NewNamespace {
  name: string;
  owner: string;
  personal: boolean;
  preview?: PreviewInfo;
}

/**
 * A pipeline's last run as the service recorded it: what it was asked (repository, branch, file),
 * who asked (the run acts with that user's credentials), its Job and its outcome.
 */
export type RunRecord = Omit<PipelineRunBody, 'skipped'> & {
  runId: string;
  /** The user whose credentials and stored secrets the run uses; destroy and reuseParams act for that user only. */
  actor?: string;
  /** The run's own API token (scope `run`), revoked when the run's end is recorded. */
  apiTokenId?: string;
  /** The branch the runner cloned (the repository's default one when none was asked), once the run has ended. */
  clonedBranch?: string;
};

/** Thrown by putRecord when another writer changed the record first. */
export class RecordConflict extends Error {}

/** The namespace of a record does not exist, or is being deleted: the user's to hear (404), not an internal error. */
export class NamespaceGone extends Error {}

/**
 * Pipeline records and the deploy's `--var` values, kept where only the service writes (its own
 * namespace): what a later destroy or redeploy acts on never comes from an object a user can write.
 */
export interface RunRecords {
  getRecord(namespace: string, name: string): Promise<{ record: RunRecord; version: string } | undefined>;
  /**
   * Creates (version undefined) or replaces the record at `version`; RecordConflict when another
   * writer got there first. Answers the new version.
   */
  putRecord(record: RunRecord, version: string | undefined, labels: Record<string, string>): Promise<string>;
  deleteRecord(namespace: string, name: string): Promise<void>;
  /** The variables kept for the pipeline are exactly `variables` (NAME=VALUE, in order; none: nothing kept). */
  putVariables(namespace: string, name: string, variables: readonly string[], labels: Record<string, string>): Promise<void>;
  /** The variables putVariables kept, in order. */
  getVariables(namespace: string, name: string): Promise<string[]>;
  deleteVariables(namespace: string, name: string): Promise<void>;
  /** Every pipeline record of the namespace (its runs count as activity there). */
  listRecords(namespace: string): Promise<RunRecord[]>;
}

export interface Store extends LoginStore {
  /** Pipeline runs' records (server/pipelines/). */
  readonly runs: RunRecords;

  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;

  /** Creates the user; a ConflictError when the name is taken. */
  createUser(user: UserRecord): Promise<void>;
  getUser(name: string): Promise<UserRecord | undefined>;
  /** Removes the user and its tokens and secrets (not its namespaces). */
  deleteUser(name: string): Promise<void>;
  /** Marks the user disabled or enabled again; false when there is no such user. */
  setUserDisabled(name: string, disabled: boolean): Promise<boolean>;
  /** Makes the user an admin or a plain user; false when there is no such user. */
  setUserAdmin(name: string, admin: boolean): Promise<boolean>;
  /** Every user, by name. */
  listUsers(): Promise<UserRecord[]>;

  /** Stores it; answers the record as stored (with its objectRef, where the store has one). */
  addToken(token: TokenRecord): Promise<TokenRecord>;
  /** The token whose full hash this is, or undefined (unknown or revoked). */
  findToken(hash: string): Promise<TokenRecord | undefined>;
  listTokens(user: string): Promise<TokenRecord[]>;
  /** false when the user has no token with this id. */
  deleteToken(user: string, id: string): Promise<boolean>;
  /** Deletes every token of the user (and so every Kubernetes token bound to one). */
  deleteTokens(user: string): Promise<void>;
  /** Deletes the tokens past their expiry, every user's; how many. */
  sweepExpiredTokens(now: Date): Promise<number>;

  /** Namespaces devtool manages; only `owner`'s when given. */
  listNamespaces(owner?: string): Promise<NamespaceRecord[]>;
  /** Any namespace of the cluster with this name (devtool's or not), so a taken name is known. */
  namespaceExists(name: string): Promise<boolean>;
  getNamespace(name: string): Promise<NamespaceRecord | undefined>;
  /**
   * Creates it and grants its owner the rights on it (and, for a global preview, every user the
   * rights to use it); a ConflictError when the name is taken.
   */
  createNamespace(ns: NewNamespace): Promise<NamespaceRecord>;
  deleteNamespace(name: string): Promise<void>;
  /** The namespaces of preview environments, every user's. */
  listPreviews(): Promise<NamespaceRecord[]>;
  /** Changes what a preview's namespace records; false when it is gone. */
  updatePreview(name: string, update: PreviewUpdate): Promise<boolean>;
  /** Changes a namespace's marks (the service's own right to patch a Namespace); false when it is gone. */
  setNamespaceMarks(name: string, update: MarksUpdate): Promise<boolean>;
  /**
   * Watches every namespace devtool manages (what listNamespaces answers) until the answer is
   * called: all of them first and after every break, then each change. Absent: the store cannot
   * watch, and the dashboard's namespaces are not live.
   */
  watchNamespaces?(sink: NamespaceSink): () => void;

  secretNames(user: string): Promise<string[]>;
  secretValues(user: string): Promise<Record<string, string>>;
  putSecret(user: string, name: string, value: string): Promise<void>;
  /** false when there was no such secret. */
  deleteSecret(user: string, name: string): Promise<boolean>;
}

/**
 * A short-lived login record every replica must see: a browser session, an authorization code, a
 * device code. `fields` are flat strings so that one field can change without overwriting another
 * (a device poll stamps `lastPoll` while the user approves on another replica).
 */
export interface GrantRecord {
  kind: GrantKind;
  /** Not a secret: names the record (a hash prefix of its secret, or a device user code). */
  id: string;
  /** The user it belongs to, when known. */
  user?: string;
  expiresAt: string;
  fields: Record<string, string>;
}

export type GrantKind = 'session' | 'code' | 'device';

/** What the login pages and endpoints need from the store, next to the accounts of Store. */
export interface LoginStore {
  /** A ConflictError when a grant of this kind and id exists. */
  putGrant(grant: GrantRecord): Promise<void>;
  getGrant(kind: GrantKind, id: string): Promise<GrantRecord | undefined>;
  /** Sets these fields (and the user, when given); false when the grant is gone. */
  updateGrant(kind: GrantKind, id: string, fields: Record<string, string>, user?: string): Promise<boolean>;
  /** true for exactly one caller when several delete the same grant at once (single-use codes). */
  deleteGrant(kind: GrantKind, id: string): Promise<boolean>;
  /** The grants of this kind not yet past their expiry at `now`. */
  listLiveGrants(kind: GrantKind, now: Date): Promise<GrantRecord[]>;
  /** Deletes the grants past their expiry that nobody read again (abandoned sessions and codes); how many. */
  sweepExpiredGrants(now: Date): Promise<number>;
  /** The scrypt hash of the user's password (server/passwords.ts), or undefined when it has none. */
  getPasswordHash(user: string): Promise<string | undefined>;
  setPasswordHash(user: string, hash: string): Promise<void>;
}

/** A name already taken (user, namespace). */
export class ConflictError extends Error {}
