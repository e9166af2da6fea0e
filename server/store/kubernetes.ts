/**
 * The store as Kubernetes objects (docs/decisions/0082-state-as-kubernetes-objects.md):
 * - a user is a ServiceAccount `user-<name>` in the service's namespace, labelled with its name and
 *   whether it is an admin;
 * - each API token is a Secret `devtool-token-<id>` there holding only the token's SHA-256, found by
 *   name from the hash (one GET per request) and owned by the user's ServiceAccount, so deleting the
 *   account removes its tokens;
 * - a user's stored secrets are one Secret `devtool-secrets-<name>`, changed with merge patches
 *   (one key at a time, so two replicas writing at once do not overwrite each other);
 * - a namespace is a Namespace labelled `devtool.dev/owner=<name>`, and owning it is a RoleBinding
 *   in it that gives the user's ServiceAccount the built-in `admin` ClusterRole: Kubernetes RBAC
 *   is the isolation between users;
 * - every such namespace enforces the namespace policy (Pod Security, and the operator's quota and
 *   limit range: kubernetes-policy.ts), set before its owner gets any right there;
 * - a preview environment is such a namespace labelled `devtool.dev/preview=<scope>`, what it
 *   records in annotations; a global one also binds the built-in `view` ClusterRole to the group
 *   of every ServiceAccount of the service's namespace (all users, present and future): they read
 *   it, they cannot read its Secrets, exec into its pods or write what the service acts on.
 */
import { timingSafeEqual } from 'node:crypto';
import type * as k8s from '@kubernetes/client-node';
import { LAST_ACTIVITY, LAST_REQUEST, SLEEPING_SINCE, SLEPT_BY, WAKING_SINCE, WOKEN_AT } from '../../api/namespace-sleep.ts';
import { makeKeepAliveApiClient } from '../kube-api.ts';
import { isExpired } from '../tokens.ts';
import { kubeErrorLine, orUndefined, statusOf } from './kube-calls.ts';
import { KubeLoginStore } from './kubernetes-login.ts';
import { NamespacePolicyEnforcer } from './kubernetes-policy.ts';
import { KubeRunRecords } from './kubernetes-runs.ts';
import { DEFAULT_NAMESPACE_POLICY, LABEL_SERVICE, type NamespacePolicy } from './namespace-policy.ts';
import {
  ConflictError,
  type GrantKind,
  type GrantRecord,
  type MarksUpdate,
  type NamespaceMarks,
  type NamespaceRecord,
  type NamespaceSink,
  type NewNamespace,
  type PreviewInfo,
  type PreviewUpdate,
  type Store,
  type TokenRecord,
  type UserRecord,
} from './store.ts';

export { kubeErrorLine, orUndefined, statusOf };

export const LABEL_KIND = 'devtool.dev/kind';
export const LABEL_USER = 'devtool.dev/user';
export const LABEL_ADMIN = 'devtool.dev/admin';
export const LABEL_DISABLED = 'devtool.dev/disabled';
export const LABEL_OWNER = 'devtool.dev/owner';
export const LABEL_PERSONAL = 'devtool.dev/personal';
export const LABEL_MANAGED = 'app.kubernetes.io/managed-by';
export const LABEL_PREVIEW = 'devtool.dev/preview';
const MANAGER = 'devtool-service';
/** The API server ends a watch of namespaces after this; they are listed again. */
const NAMESPACE_WATCH_SECONDS = 300;
const OWNER_BINDING = 'devtool-owner';
/** PreviewInfo's fields as annotations of the preview's namespace. */
const PREVIEW_ANNOTATIONS = {
  pipeline: 'devtool.dev/preview-pipeline',
  deployedAt: 'devtool.dev/preview-deployed-at',
  sourceUrl: 'devtool.dev/preview-source-url',
  destroyRequestedAt: 'devtool.dev/preview-destroy-requested-at',
  destroyReason: 'devtool.dev/preview-destroy-reason',
  sleepingSince: 'devtool.dev/preview-sleeping-since',
} as const;

/** NamespaceMarks' fields as the Namespace's annotations. */
const MARK_ANNOTATIONS: Record<keyof NamespaceMarks, string> = {
  sleepingSince: SLEEPING_SINCE,
  wakingSince: WAKING_SINCE,
  sleptBy: SLEPT_BY,
  lastRequest: LAST_REQUEST,
  wokenAt: WOKEN_AT,
  lastActivity: LAST_ACTIVITY,
};

export const serviceAccountName = (user: string) => `user-${user}`;
const tokenSecretName = (id: string) => `devtool-token-${id}`;
const secretsSecretName = (user: string) => `devtool-secrets-${user}`;

export interface KubeStoreOptions {
  /** The service's own namespace: accounts, tokens and stored secrets live here. */
  namespace: string;
  /** Labels added to every object created (tests mark theirs to clean up). */
  extraLabels?: Record<string, string>;
  /** What every namespace the service makes enforces (default: Pod Security baseline). */
  namespacePolicy?: NamespacePolicy;
}

async function ignoreNotFound(p: Promise<unknown>): Promise<boolean> {
  return (await orUndefined(p.then(() => true))) ?? false;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

export class KubeStore implements Store {
  private readonly core: k8s.CoreV1Api;
  private readonly rbac: k8s.RbacAuthorizationV1Api;
  private readonly ns: string;
  private readonly extra: Record<string, string>;
  private readonly mergePatch: k8s.ConfigurationOptions;
  private readonly login: KubeLoginStore;
  private readonly policy: NamespacePolicyEnforcer;
  readonly runs: KubeRunRecords;
  private readonly watcher: k8s.Watch;

  private constructor(mod: typeof k8s, kc: k8s.KubeConfig, opts: KubeStoreOptions) {
    this.watcher = new mod.Watch(kc);
    this.core = makeKeepAliveApiClient(mod, kc, mod.CoreV1Api);
    this.rbac = makeKeepAliveApiClient(mod, kc, mod.RbacAuthorizationV1Api);
    this.ns = opts.namespace;
    this.extra = opts.extraLabels ?? {};
    this.mergePatch = mod.setHeaderOptions('Content-Type', mod.PatchStrategy.MergePatch);
    this.login = new KubeLoginStore({
      core: this.core,
      namespace: this.ns,
      labels: (own) => this.labels(own),
      mergePatch: this.mergePatch,
      ownerOf: async (user) => ownedBy(await this.core.readNamespacedServiceAccount({ name: serviceAccountName(user), namespace: this.ns })),
    });
    this.runs = new KubeRunRecords({ core: this.core, namespace: this.ns, labels: (own) => this.labels(own) });
    this.policy = new NamespacePolicyEnforcer({
      core: this.core,
      rbac: this.rbac,
      policy: opts.namespacePolicy ?? DEFAULT_NAMESPACE_POLICY,
      labels: (own) => this.labels(own),
      mergePatch: this.mergePatch,
      allUsersGroup: `system:serviceaccounts:${this.ns}`,
      serviceNamespace: this.ns,
    });
  }

  /** `kc` absent: the pod's own credentials when in a cluster, else KUBECONFIG. */
  static async create(opts: KubeStoreOptions, kc?: k8s.KubeConfig): Promise<KubeStore> {
    const mod = await import('@kubernetes/client-node');
    let config = kc;
    if (!config) {
      config = new mod.KubeConfig();
      try {
        config.loadFromDefault();
      } catch (err) {
        throw new Error(`cannot load Kubernetes credentials (the pod's, or KUBECONFIG's): ${(err as Error).message}`);
      }
    }
    return new KubeStore(mod, config, opts);
  }

  private labels(own: Record<string, string>): Record<string, string> {
    return { ...this.extra, [LABEL_MANAGED]: MANAGER, ...own };
  }

  async ping(): Promise<void> {
    await this.core.listNamespacedServiceAccount({ namespace: this.ns, limit: 1 });
  }

  async createUser(user: UserRecord): Promise<void> {
    const sa: k8s.V1ServiceAccount = {
      metadata: {
        name: serviceAccountName(user.name),
        labels: this.labels({ [LABEL_KIND]: 'user', [LABEL_USER]: user.name, [LABEL_ADMIN]: String(user.admin) }),
      },
      automountServiceAccountToken: false,
    };
    let created: k8s.V1ServiceAccount;
    try {
      created = await this.core.createNamespacedServiceAccount({ namespace: this.ns, body: sa });
    } catch (err) {
      if (statusOf(err) === 409) throw new ConflictError(`user ${user.name} already exists`);
      throw err;
    }
    try {
      await this.core.createNamespacedSecret({
        namespace: this.ns,
        body: {
          metadata: {
            name: secretsSecretName(user.name),
            labels: this.labels({ [LABEL_KIND]: 'secrets', [LABEL_USER]: user.name }),
            ownerReferences: [ownedBy(created)],
          },
          type: 'Opaque',
          data: {},
        },
      });
    } catch (err) {
      await this.deleteUser(user.name);
      throw err;
    }
  }

  async getUser(name: string): Promise<UserRecord | undefined> {
    const sa = await orUndefined(this.core.readNamespacedServiceAccount({ name: serviceAccountName(name), namespace: this.ns }));
    const user = sa && userOf(sa);
    return user?.name === name ? user : undefined;
  }

  async listUsers(): Promise<UserRecord[]> {
    const list = await this.core.listNamespacedServiceAccount({ namespace: this.ns, labelSelector: `${LABEL_MANAGED}=${MANAGER},${LABEL_KIND}=user` });
    return list.items
      .map(userOf)
      .filter((u) => u !== undefined)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async setUserAdmin(name: string, admin: boolean): Promise<boolean> {
    if (!(await this.getUser(name))) return false;
    const body = { metadata: { labels: { [LABEL_ADMIN]: String(admin) } } };
    return ignoreNotFound(this.core.patchNamespacedServiceAccount({ name: serviceAccountName(name), namespace: this.ns, body }, this.mergePatch));
  }

  async setUserDisabled(name: string, disabled: boolean): Promise<boolean> {
    if (!(await this.getUser(name))) return false;
    const body = { metadata: { labels: { [LABEL_DISABLED]: disabled ? 'true' : null } } };
    return ignoreNotFound(this.core.patchNamespacedServiceAccount({ name: serviceAccountName(name), namespace: this.ns, body }, this.mergePatch));
  }

  async deleteUser(name: string): Promise<void> {
    // Owner references would remove the Secrets too, but the garbage collector takes its time.
    await ignoreNotFound(this.core.deleteNamespacedServiceAccount({ name: serviceAccountName(name), namespace: this.ns }));
    await ignoreNotFound(this.core.deleteNamespacedSecret({ name: secretsSecretName(name), namespace: this.ns }));
    await this.login.deletePassword(name);
    await this.deleteTokens(name);
  }

  async deleteTokens(user: string): Promise<void> {
    await this.core.deleteCollectionNamespacedSecret({ namespace: this.ns, labelSelector: `${LABEL_KIND}=token,${LABEL_USER}=${user}` });
  }

  async sweepExpiredTokens(now: Date): Promise<number> {
    const list = await this.core.listNamespacedSecret({ namespace: this.ns, labelSelector: `${LABEL_KIND}=token` });
    let swept = 0;
    for (const s of list.items) {
      const t = this.tokenOf(s);
      if (t && isExpired(t, now) && (await this.deleteToken(t.user, t.id))) swept++;
    }
    return swept;
  }

  async addToken(token: TokenRecord): Promise<TokenRecord> {
    const sa = await this.core.readNamespacedServiceAccount({ name: serviceAccountName(token.user), namespace: this.ns });
    const data: Record<string, string> = { hash: b64(token.hash), name: b64(token.name), createdAt: b64(token.createdAt) };
    if (token.expiresAt) data['expiresAt'] = b64(token.expiresAt);
    if (token.scope) data['scope'] = b64(token.scope);
    const created = await this.core.createNamespacedSecret({
      namespace: this.ns,
      body: {
        metadata: { name: tokenSecretName(token.id), labels: this.labels({ [LABEL_KIND]: 'token', [LABEL_USER]: token.user }), ownerReferences: [ownedBy(sa)] },
        type: 'Opaque',
        data,
      },
    });
    return this.tokenOf(created) ?? token;
  }

  async findToken(hash: string): Promise<TokenRecord | undefined> {
    const s = await orUndefined(this.core.readNamespacedSecret({ name: tokenSecretName(hash.slice(0, 24)), namespace: this.ns }));
    if (!s) return undefined;
    const t = this.tokenOf(s);
    if (!t || t.hash.length !== hash.length || !timingSafeEqual(Buffer.from(t.hash), Buffer.from(hash))) return undefined;
    return t;
  }

  private tokenOf(s: k8s.V1Secret): TokenRecord | undefined {
    const labels = s.metadata?.labels ?? {};
    const user = labels[LABEL_USER];
    if (labels[LABEL_KIND] !== 'token' || !user || !s.data) return undefined;
    const hash = unb64(s.data['hash']);
    const t: TokenRecord = { id: hash.slice(0, 24), hash, user, name: unb64(s.data['name']), createdAt: unb64(s.data['createdAt']) };
    if (s.data['expiresAt']) t.expiresAt = unb64(s.data['expiresAt']);
    // Any scope recorded narrows the token; 'run' is the one there is.
    if (s.data['scope']) t.scope = 'run';
    if (s.metadata?.name && s.metadata.uid) t.objectRef = { name: s.metadata.name, uid: s.metadata.uid };
    return t;
  }

  async listTokens(user: string): Promise<TokenRecord[]> {
    const list = await this.core.listNamespacedSecret({ namespace: this.ns, labelSelector: `${LABEL_KIND}=token,${LABEL_USER}=${user}` });
    return list.items.flatMap((s) => this.tokenOf(s) ?? []).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async deleteToken(user: string, id: string): Promise<boolean> {
    const s = await orUndefined(this.core.readNamespacedSecret({ name: tokenSecretName(id), namespace: this.ns }));
    if (!s || this.tokenOf(s)?.user !== user) return false;
    return ignoreNotFound(
      this.core.deleteNamespacedSecret({ name: tokenSecretName(id), namespace: this.ns, body: { preconditions: { uid: s.metadata?.uid } } }),
    );
  }

  async listNamespaces(owner?: string): Promise<NamespaceRecord[]> {
    const selector = owner === undefined ? `${LABEL_MANAGED}=${MANAGER},${LABEL_OWNER}` : `${LABEL_MANAGED}=${MANAGER},${LABEL_OWNER}=${owner}`;
    const list = await this.core.listNamespace({ labelSelector: selector });
    return list.items.flatMap((n) => namespaceOf(n) ?? []).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * A list, then a watch from its version (bookmarks on, ended by the API server after
   * NAMESPACE_WATCH_SECONDS), then a list again: the service's own right to list and watch
   * Namespaces (chart/templates/service-rbac.yaml). A failure waits 1 s, 2 s... up to 30 s.
   */
  watchNamespaces(sink: NamespaceSink): () => void {
    const selector = `${LABEL_MANAGED}=${MANAGER},${LABEL_OWNER}`;
    let stopped = false;
    let current: AbortController | undefined;
    void (async () => {
      let backoff = 1000;
      while (!stopped) {
        try {
          const list = await this.core.listNamespace({ labelSelector: selector });
          if (stopped) return;
          sink.reset(list.items.flatMap((n) => namespaceOf(n) ?? []));
          const query = {
            labelSelector: selector,
            allowWatchBookmarks: true,
            timeoutSeconds: NAMESPACE_WATCH_SECONDS,
            ...(list.metadata?.resourceVersion ? { resourceVersion: list.metadata.resourceVersion } : {}),
          };
          await new Promise<void>((resolve, reject) => {
            const event = (type: string, object: k8s.V1Namespace) => {
              // ERROR (410 Gone: the version is too old): list again.
              if (type === 'ERROR') return current?.abort();
              const record = type === 'DELETED' ? undefined : namespaceOf(object);
              if (record) sink.put(record);
              else if (type !== 'BOOKMARK' && object.metadata?.name) sink.remove(object.metadata.name);
            };
            this.watcher
              .watch('/api/v1/namespaces', query, event, (err) => (err && !current?.signal.aborted ? reject(err) : resolve()))
              .then((c) => {
                current = c;
                if (stopped) c.abort();
              }, reject);
          });
          backoff = 1000;
        } catch (err) {
          if (stopped) return;
          sink.broke?.(err);
          await new Promise((r) => setTimeout(r, backoff).unref());
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
    })();
    return () => {
      stopped = true;
      current?.abort();
    };
  }

  async namespaceExists(name: string): Promise<boolean> {
    return (await orUndefined(this.core.readNamespace({ name }))) !== undefined;
  }

  async getNamespace(name: string): Promise<NamespaceRecord | undefined> {
    const n = await orUndefined(this.core.readNamespace({ name }));
    return n && namespaceOf(n);
  }

  async createNamespace(ns: NewNamespace): Promise<NamespaceRecord> {
    let created: k8s.V1Namespace;
    try {
      const labels = this.labels({
        ...this.policy.newNamespaceLabels(),
        [LABEL_OWNER]: ns.owner,
        [LABEL_PERSONAL]: String(ns.personal),
        ...(ns.preview ? { [LABEL_PREVIEW]: ns.preview.scope } : {}),
      });
      const annotations = ns.preview ? previewAnnotations(ns.preview) : undefined;
      created = await this.core.createNamespace({ body: { metadata: { name: ns.name, labels, ...(annotations ? { annotations } : {}) } } });
    } catch (err) {
      if (statusOf(err) === 409) throw new ConflictError(`namespace ${ns.name} already exists`);
      throw err;
    }
    try {
      // The quota and limits before any right: the owner never has a moment without them.
      await this.policy.applyLimits(ns.name);
      await this.rbac.createNamespacedRoleBinding({
        namespace: ns.name,
        body: {
          metadata: { name: OWNER_BINDING, labels: this.labels({ [LABEL_OWNER]: ns.owner }) },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
          subjects: [{ kind: 'ServiceAccount', name: serviceAccountName(ns.owner), namespace: this.ns }],
        },
      });
      if (ns.preview?.scope === 'global') {
        // Every user, including those who sign up later: users are the ServiceAccounts of this
        // namespace. `view`: they use the preview; the owner's run credentials and stored secrets
        // in it, and the pods that mount them, stay out of their reach.
        await this.rbac.createNamespacedRoleBinding({ namespace: ns.name, body: this.policy.allUsersBinding() });
      }
    } catch (err) {
      // Nothing half-done: a namespace its owner cannot use is removed.
      await ignoreNotFound(this.core.deleteNamespace({ name: ns.name }));
      throw err;
    }
    return namespaceOf(created) ?? { ...ns, status: 'Active' };
  }

  /**
   * Brings every namespace the service made up to the namespace policy; what changed, by namespace.
   * Each failure is reported, not thrown: one namespace must not keep the others behind.
   */
  async enforceNamespacePolicy(): Promise<{ changed: Record<string, string[]>; failed: Record<string, string> }> {
    const list = await this.core.listNamespace({ labelSelector: `${LABEL_MANAGED}=${MANAGER},${LABEL_OWNER}` });
    const report = { changed: {} as Record<string, string[]>, failed: {} as Record<string, string> };
    for (const n of list.items) {
      const name = n.metadata?.name;
      if (!name || n.metadata?.deletionTimestamp) continue;
      try {
        const labels = n.metadata?.labels ?? {};
        // Another release's namespaces keep theirs; one older than the label is this service's when its owner is a user here.
        const unlabelled = !labels[LABEL_SERVICE] && (await this.getUser(labels[LABEL_OWNER]!)) !== undefined;
        const changed = await this.policy.reconcile(n, { globalPreview: labels[LABEL_PREVIEW] === 'global', unlabelled });
        if (changed.length) report.changed[name] = changed;
      } catch (err) {
        report.failed[name] = kubeErrorLine(err) ?? (err as Error).message;
      }
    }
    return report;
  }

  async listPreviews(): Promise<NamespaceRecord[]> {
    const list = await this.core.listNamespace({ labelSelector: `${LABEL_MANAGED}=${MANAGER},${LABEL_PREVIEW}` });
    return list.items.flatMap((n) => namespaceOf(n) ?? []).sort((a, b) => a.name.localeCompare(b.name));
  }

  async updatePreview(name: string, update: PreviewUpdate): Promise<boolean> {
    return await this.patchAnnotations(name, update, (k) => PREVIEW_ANNOTATIONS[k as keyof PreviewUpdate]);
  }

  async setNamespaceMarks(name: string, update: MarksUpdate): Promise<boolean> {
    return await this.patchAnnotations(name, update, (k) => MARK_ANNOTATIONS[k as keyof NamespaceMarks]);
  }

  /** Sets (a string) or removes (null) the Namespace's annotations named by `annotation(field)`; false when it is gone. */
  private async patchAnnotations(name: string, update: Record<string, string | null | undefined>, annotation: (field: string) => string): Promise<boolean> {
    const annotations: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(update)) if (v !== undefined) annotations[annotation(k)] = v;
    try {
      await this.core.patchNamespace({ name, body: { metadata: { annotations } } }, this.mergePatch);
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }

  async deleteNamespace(name: string): Promise<void> {
    await ignoreNotFound(this.core.deleteNamespace({ name }));
  }

  private async secretsOf(user: string): Promise<Record<string, string>> {
    const s = await orUndefined(this.core.readNamespacedSecret({ name: secretsSecretName(user), namespace: this.ns }));
    return s?.data ?? {};
  }

  async secretNames(user: string): Promise<string[]> {
    return Object.keys(await this.secretsOf(user)).sort();
  }

  async secretValues(user: string): Promise<Record<string, string>> {
    return Object.fromEntries(Object.entries(await this.secretsOf(user)).map(([k, v]) => [k, unb64(v)]));
  }

  async putSecret(user: string, name: string, value: string): Promise<void> {
    await this.core.patchNamespacedSecret({ name: secretsSecretName(user), namespace: this.ns, body: { data: { [name]: b64(value) } } }, this.mergePatch);
  }

  async deleteSecret(user: string, name: string): Promise<boolean> {
    if (!(name in (await this.secretsOf(user)))) return false;
    await this.core.patchNamespacedSecret({ name: secretsSecretName(user), namespace: this.ns, body: { data: { [name]: null } } }, this.mergePatch);
    return true;
  }

  // Login records: kubernetes-login.ts.
  putGrant = (g: GrantRecord) => this.login.putGrant(g);
  getGrant = (kind: GrantKind, id: string) => this.login.getGrant(kind, id);
  updateGrant = (kind: GrantKind, id: string, fields: Record<string, string>, user?: string) => this.login.updateGrant(kind, id, fields, user);
  deleteGrant = (kind: GrantKind, id: string) => this.login.deleteGrant(kind, id);
  listLiveGrants = (kind: GrantKind, now: Date) => this.login.listLiveGrants(kind, now);
  sweepExpiredGrants = (now: Date) => this.login.sweepExpiredGrants(now);
  getPasswordHash = (user: string) => this.login.getPasswordHash(user);
  setPasswordHash = (user: string, hash: string) => this.login.setPasswordHash(user, hash);
}

function ownedBy(obj: { apiVersion?: string; kind?: string; metadata?: k8s.V1ObjectMeta }): k8s.V1OwnerReference {
  return { apiVersion: 'v1', kind: 'ServiceAccount', name: obj.metadata?.name ?? '', uid: obj.metadata?.uid ?? '' };
}

/** The user a ServiceAccount of the service's namespace stands for, or undefined when it is none. */
function userOf(sa: k8s.V1ServiceAccount): UserRecord | undefined {
  const labels = sa.metadata?.labels ?? {};
  const name = labels[LABEL_USER];
  if (labels[LABEL_KIND] !== 'user' || !name || sa.metadata?.name !== serviceAccountName(name)) return undefined;
  return { name, admin: labels[LABEL_ADMIN] === 'true', ...(labels[LABEL_DISABLED] === 'true' ? { disabled: true } : {}) };
}

function namespaceOf(n: k8s.V1Namespace): NamespaceRecord | undefined {
  const labels = n.metadata?.labels ?? {};
  const owner = labels[LABEL_OWNER];
  if (!owner || !n.metadata?.name) return undefined;
  const terminating = n.status?.phase === 'Terminating' || n.metadata.deletionTimestamp !== undefined;
  const record: NamespaceRecord = { name: n.metadata.name, owner, personal: labels[LABEL_PERSONAL] === 'true', status: terminating ? 'Terminating' : 'Active' };
  const created = n.metadata.creationTimestamp;
  if (created) record.createdAt = new Date(created).toISOString();
  const scope = labels[LABEL_PREVIEW];
  if (scope === 'personal' || scope === 'global') {
    const a = n.metadata.annotations ?? {};
    const preview: PreviewInfo = {
      scope,
      pipeline: a[PREVIEW_ANNOTATIONS.pipeline] ?? n.metadata.name,
      deployedAt: a[PREVIEW_ANNOTATIONS.deployedAt] ?? record.createdAt ?? new Date(0).toISOString(),
    };
    for (const k of ['sourceUrl', 'destroyRequestedAt', 'destroyReason', 'sleepingSince'] as const) {
      const v = a[PREVIEW_ANNOTATIONS[k]];
      if (v) preview[k] = v;
    }
    record.preview = preview;
  }
  const marks: NamespaceMarks = {};
  for (const [field, annotation] of Object.entries(MARK_ANNOTATIONS)) {
    const v = n.metadata.annotations?.[annotation];
    if (v) marks[field as keyof NamespaceMarks] = v;
  }
  if (Object.keys(marks).length) record.marks = marks;
  return record;
}

function previewAnnotations(p: PreviewInfo): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, key] of Object.entries(PREVIEW_ANNOTATIONS)) {
    const v = p[k as keyof PreviewInfo];
    if (v) out[key] = v;
  }
  return out;
}
