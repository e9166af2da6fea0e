/**
 * Where the service keeps its state: the narrow interface the handlers use. Two implementations:
 * memory.ts (unit tests of the handlers) and kubernetes.ts (production: every record is a
 * Kubernetes object, so the service itself is stateless and runs with several replicas).
 * The store keeps records; rules (who may do what, token generation, expiry) live in the handlers.
 */

export interface UserRecord {
  name: string;
  admin: boolean;
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
}

export interface NamespaceRecord {
  name: string;
  owner: string;
  personal: boolean;
  status: 'Active' | 'Terminating';
}

export interface Store {
  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;

  /** Creates the user; a ConflictError when the name is taken. */
  createUser(user: UserRecord): Promise<void>;
  getUser(name: string): Promise<UserRecord | undefined>;
  /** Removes the user and its tokens and secrets (not its namespaces). Used to undo a half-made account. */
  deleteUser(name: string): Promise<void>;

  addToken(token: TokenRecord): Promise<void>;
  /** The token whose full hash this is, or undefined (unknown or revoked). */
  findToken(hash: string): Promise<TokenRecord | undefined>;
  listTokens(user: string): Promise<TokenRecord[]>;
  /** false when the user has no token with this id. */
  deleteToken(user: string, id: string): Promise<boolean>;

  /** Namespaces devtool manages; only `owner`'s when given. */
  listNamespaces(owner?: string): Promise<NamespaceRecord[]>;
  /** Any namespace of the cluster with this name (devtool's or not), so a taken name is known. */
  namespaceExists(name: string): Promise<boolean>;
  getNamespace(name: string): Promise<NamespaceRecord | undefined>;
  /** Creates it and grants its owner the rights on it; a ConflictError when the name is taken. */
  createNamespace(ns: { name: string; owner: string; personal: boolean }): Promise<NamespaceRecord>;
  deleteNamespace(name: string): Promise<void>;

  secretNames(user: string): Promise<string[]>;
  secretValues(user: string): Promise<Record<string, string>>;
  putSecret(user: string, name: string, value: string): Promise<void>;
  /** false when there was no such secret. */
  deleteSecret(user: string, name: string): Promise<boolean>;
}

/** A name already taken (user, namespace). */
export class ConflictError extends Error {}
