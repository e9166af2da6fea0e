/** The store in memory: for unit tests of the handlers (fastify.inject), never for a running service. */
import {
  ConflictError,
  type GrantKind,
  type GrantRecord,
  type MarksUpdate,
  type NamespaceMarks,
  type NamespaceRecord,
  type NamespaceSink,
  type NewNamespace,
  type PreviewUpdate,
  type Store,
  type TokenRecord,
  type UserRecord,
} from './store.ts';
import { isExpired } from '../tokens.ts';
import { memoryRunRecords } from './memory-runs.ts';

const copy = (n: NamespaceRecord): NamespaceRecord => ({
  ...n,
  ...(n.preview ? { preview: { ...n.preview } } : {}),
  ...(n.marks ? { marks: { ...n.marks } } : {}),
});

export class MemoryStore implements Store {
  readonly users = new Map<string, UserRecord>();
  readonly tokens = new Map<string, TokenRecord>();
  readonly namespaces = new Map<string, NamespaceRecord>();
  readonly secrets = new Map<string, Map<string, string>>();
  /** Namespaces that exist in the "cluster" without devtool (kube-system...). */
  readonly foreignNamespaces = new Set<string>(['default', 'kube-system', 'kube-public']);

  readonly runs = memoryRunRecords().runs;
  readonly grants = new Map<string, GrantRecord>();
  readonly passwords = new Map<string, string>();

  private readonly watchers = new Set<NamespaceSink>();

  watchNamespaces(sink: NamespaceSink): () => void {
    this.watchers.add(sink);
    sink.reset([...this.namespaces.values()].map(copy));
    return () => this.watchers.delete(sink);
  }

  /** Tells the watches of namespaces what became of `name`. */
  private changed(name: string): void {
    const n = this.namespaces.get(name);
    for (const w of [...this.watchers]) n ? w.put(copy(n)) : w.remove(name);
  }

  /** Set to make ping() fail, as an unreachable API server would. */
  down = false;

  async ping(): Promise<void> {
    if (this.down) throw new Error('store unreachable');
  }

  async createUser(user: UserRecord): Promise<void> {
    if (this.users.has(user.name)) throw new ConflictError(`user ${user.name} already exists`);
    this.users.set(user.name, { ...user });
    this.secrets.set(user.name, new Map());
  }

  async getUser(name: string): Promise<UserRecord | undefined> {
    const u = this.users.get(name);
    return u && { ...u };
  }

  async deleteUser(name: string): Promise<void> {
    this.users.delete(name);
    this.secrets.delete(name);
    this.passwords.delete(name);
    await this.deleteTokens(name);
  }

  async setUserAdmin(name: string, admin: boolean): Promise<boolean> {
    const u = this.users.get(name);
    if (!u) return false;
    u.admin = admin;
    return true;
  }

  async listUsers(): Promise<UserRecord[]> {
    return [...this.users.values()].map((u) => ({ ...u })).sort((a, b) => a.name.localeCompare(b.name));
  }

  async setUserDisabled(name: string, disabled: boolean): Promise<boolean> {
    const u = this.users.get(name);
    if (!u) return false;
    if (disabled) u.disabled = true;
    else delete u.disabled;
    return true;
  }

  /** Like KubeStore, each token gets an object of its own (a name and a uid) that credentials can be bound to. */
  async addToken(token: TokenRecord): Promise<TokenRecord> {
    const stored = { ...token, objectRef: { name: `devtool-token-${token.id}`, uid: `uid-${token.id}` } };
    this.tokens.set(token.hash, stored);
    return { ...stored };
  }

  async findToken(hash: string): Promise<TokenRecord | undefined> {
    const t = this.tokens.get(hash);
    return t && { ...t };
  }

  async listTokens(user: string): Promise<TokenRecord[]> {
    return [...this.tokens.values()].filter((t) => t.user === user).map((t) => ({ ...t }));
  }

  async deleteToken(user: string, id: string): Promise<boolean> {
    for (const [hash, t] of this.tokens) {
      if (t.user === user && t.id === id) return this.tokens.delete(hash);
    }
    return false;
  }

  async deleteTokens(user: string): Promise<void> {
    for (const [hash, t] of this.tokens) if (t.user === user) this.tokens.delete(hash);
  }

  async sweepExpiredTokens(now: Date): Promise<number> {
    let swept = 0;
    for (const [hash, t] of this.tokens) if (isExpired(t, now) && this.tokens.delete(hash)) swept++;
    return swept;
  }

  async listNamespaces(owner?: string): Promise<NamespaceRecord[]> {
    return [...this.namespaces.values()].filter((n) => owner === undefined || n.owner === owner).map(copy);
  }

  async namespaceExists(name: string): Promise<boolean> {
    return this.namespaces.has(name) || this.foreignNamespaces.has(name);
  }

  async getNamespace(name: string): Promise<NamespaceRecord | undefined> {
    const n = this.namespaces.get(name);
    return n && copy(n);
  }

  async createNamespace(ns: NewNamespace): Promise<NamespaceRecord> {
    if (await this.namespaceExists(ns.name)) throw new ConflictError(`namespace ${ns.name} already exists`);
    const record: NamespaceRecord = copy({ ...ns, status: 'Active', createdAt: new Date().toISOString() });
    this.namespaces.set(ns.name, record);
    this.changed(ns.name);
    return copy(record);
  }

  async listPreviews(): Promise<NamespaceRecord[]> {
    return [...this.namespaces.values()].filter((n) => n.preview).map(copy);
  }

  async updatePreview(name: string, update: PreviewUpdate): Promise<boolean> {
    const n = this.namespaces.get(name);
    if (!n?.preview) return false;
    for (const [k, v] of Object.entries(update)) {
      if (v === null) delete n.preview[k as keyof PreviewUpdate];
      else if (v !== undefined) n.preview[k as keyof PreviewUpdate] = v;
    }
    this.changed(name);
    return true;
  }

  async setNamespaceMarks(name: string, update: MarksUpdate): Promise<boolean> {
    const n = this.namespaces.get(name);
    if (!n) return false;
    const marks = { ...n.marks };
    for (const [k, v] of Object.entries(update)) {
      if (v === null) delete marks[k as keyof NamespaceMarks];
      else if (v !== undefined) marks[k as keyof NamespaceMarks] = v;
    }
    n.marks = marks;
    this.changed(name);
    return true;
  }

  /** As Kubernetes does, the namespace stays, Terminating, until its contents are gone; `finishDeletes` ends that. */
  async deleteNamespace(name: string): Promise<void> {
    const n = this.namespaces.get(name);
    if (n) n.status = 'Terminating';
    if (n) this.changed(name);
  }

  finishDeletes(): void {
    for (const [name, n] of this.namespaces) if (n.status === 'Terminating' && this.namespaces.delete(name)) this.changed(name);
  }

  async secretNames(user: string): Promise<string[]> {
    return [...(this.secrets.get(user)?.keys() ?? [])].sort();
  }

  async secretValues(user: string): Promise<Record<string, string>> {
    return Object.fromEntries(this.secrets.get(user) ?? []);
  }

  async putSecret(user: string, name: string, value: string): Promise<void> {
    const m = this.secrets.get(user) ?? new Map<string, string>();
    m.set(name, value);
    this.secrets.set(user, m);
  }

  async deleteSecret(user: string, name: string): Promise<boolean> {
    return this.secrets.get(user)?.delete(name) ?? false;
  }

  async putGrant(grant: GrantRecord): Promise<void> {
    const key = `${grant.kind}/${grant.id}`;
    if (this.grants.has(key)) throw new ConflictError(`${grant.kind} ${grant.id} already exists`);
    this.grants.set(key, { ...grant, fields: { ...grant.fields } });
  }

  async getGrant(kind: GrantKind, id: string): Promise<GrantRecord | undefined> {
    const g = this.grants.get(`${kind}/${id}`);
    return g && { ...g, fields: { ...g.fields } };
  }

  async updateGrant(kind: GrantKind, id: string, fields: Record<string, string>, user?: string): Promise<boolean> {
    const g = this.grants.get(`${kind}/${id}`);
    if (!g) return false;
    Object.assign(g.fields, fields);
    if (user !== undefined) g.user = user;
    return true;
  }

  async deleteGrant(kind: GrantKind, id: string): Promise<boolean> {
    return this.grants.delete(`${kind}/${id}`);
  }

  async listLiveGrants(kind: GrantKind, now: Date): Promise<GrantRecord[]> {
    return [...this.grants.values()].filter((g) => g.kind === kind && Date.parse(g.expiresAt) > now.getTime()).map((g) => ({ ...g, fields: { ...g.fields } }));
  }

  async sweepExpiredGrants(now: Date): Promise<number> {
    let swept = 0;
    for (const [key, g] of this.grants) if (Date.parse(g.expiresAt) <= now.getTime() && this.grants.delete(key)) swept++;
    return swept;
  }

  async getPasswordHash(user: string): Promise<string | undefined> {
    return this.passwords.get(user);
  }

  async setPasswordHash(user: string, hash: string): Promise<void> {
    this.passwords.set(user, hash);
  }
}
