/**
 * The login records of the Kubernetes store (kubernetes.ts): every replica sees them.
 * - a grant (browser session, authorization code, device code) is a Secret
 *   `devtool-<kind>-<id>` in the service's namespace, one data key per field, so two replicas
 *   changing different fields (a device poll, the approval) never overwrite each other; a grant
 *   past its expiry is deleted when it is next read;
 * - a password hash is a Secret `devtool-password-<user>` owned by the user's ServiceAccount.
 * Deleting with the object's uid as a precondition lets exactly one replica win a single-use code.
 */
import type * as k8s from '@kubernetes/client-node';
import { ConflictError, type GrantKind, type GrantRecord, type LoginStore } from './store.ts';

const LABEL_KIND = 'devtool.dev/kind';
const LABEL_USER = 'devtool.dev/user';
const LABEL_EXPIRES = 'devtool.dev/expires';

const grantName = (kind: GrantKind, id: string) => `devtool-${kind}-${id.toLowerCase()}`;
const passwordName = (user: string) => `devtool-password-${user}`;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

function grantOf(kind: GrantKind, s: k8s.V1Secret): GrantRecord {
  const data = s.data ?? {};
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) if (k.startsWith('f.')) fields[k.slice(2)] = unb64(v);
  const g: GrantRecord = { kind, id: unb64(data['id']), expiresAt: unb64(data['expiresAt']), fields };
  if (data['user']) g.user = unb64(data['user']);
  return g;
}

export interface KubeLoginStoreParts {
  core: k8s.CoreV1Api;
  namespace: string;
  labels(own: Record<string, string>): Record<string, string>;
  mergePatch: k8s.ConfigurationOptions;
  /** The owner reference of a user's ServiceAccount (its records go with it). */
  ownerOf(user: string): Promise<k8s.V1OwnerReference>;
}

export class KubeLoginStore implements LoginStore {
  constructor(private readonly p: KubeLoginStoreParts) {}

  async putGrant(g: GrantRecord): Promise<void> {
    const data: Record<string, string> = { expiresAt: b64(g.expiresAt), id: b64(g.id) };
    for (const [k, v] of Object.entries(g.fields)) data[`f.${k}`] = b64(v);
    if (g.user) data['user'] = b64(g.user);
    const own: Record<string, string> = { [LABEL_KIND]: g.kind, [LABEL_EXPIRES]: String(Math.floor(Date.parse(g.expiresAt) / 1000)) };
    if (g.user) own[LABEL_USER] = g.user;
    try {
      await this.p.core.createNamespacedSecret({
        namespace: this.p.namespace,
        body: { metadata: { name: grantName(g.kind, g.id), labels: this.p.labels(own) }, type: 'Opaque', data },
      });
    } catch (err) {
      if (statusOf(err) === 409) throw new ConflictError(`${g.kind} ${g.id} already exists`);
      throw err;
    }
  }

  async getGrant(kind: GrantKind, id: string): Promise<GrantRecord | undefined> {
    const s = await this.read(grantName(kind, id));
    if (!s?.data || s.metadata?.labels?.[LABEL_KIND] !== kind || unb64(s.data['id']) !== id) return undefined;
    return grantOf(kind, s);
  }

  async listLiveGrants(kind: GrantKind, now: Date): Promise<GrantRecord[]> {
    const list = await this.p.core.listNamespacedSecret({ namespace: this.p.namespace, labelSelector: `${LABEL_KIND}=${kind}` });
    return list.items.map((s) => grantOf(kind, s)).filter((g) => Date.parse(g.expiresAt) > now.getTime());
  }

  async updateGrant(kind: GrantKind, id: string, fields: Record<string, string>, user?: string): Promise<boolean> {
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(fields)) data[`f.${k}`] = b64(v);
    if (user !== undefined) data['user'] = b64(user);
    try {
      await this.p.core.patchNamespacedSecret({ name: grantName(kind, id), namespace: this.p.namespace, body: { data } }, this.p.mergePatch);
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }

  async deleteGrant(kind: GrantKind, id: string): Promise<boolean> {
    const s = await this.read(grantName(kind, id));
    if (!s) return false;
    try {
      await this.p.core.deleteNamespacedSecret({
        name: grantName(kind, id),
        namespace: this.p.namespace,
        body: { preconditions: { uid: s.metadata?.uid } },
      });
      return true;
    } catch (err) {
      // 404: another replica deleted it first; 409: the precondition failed (it was replaced).
      if (statusOf(err) === 404 || statusOf(err) === 409) return false;
      throw err;
    }
  }

  async sweepExpiredGrants(now: Date): Promise<number> {
    let swept = 0;
    for (const kind of ['session', 'code', 'device'] as const) {
      const list = await this.p.core.listNamespacedSecret({ namespace: this.p.namespace, labelSelector: `${LABEL_KIND}=${kind}` });
      for (const s of list.items) {
        const expires = Number(s.metadata?.labels?.[LABEL_EXPIRES]);
        if (!Number.isFinite(expires) || expires * 1000 > now.getTime()) continue;
        if (await this.deleteGrant(kind, unb64(s.data?.['id']))) swept++;
      }
    }
    return swept;
  }

  async getPasswordHash(user: string): Promise<string | undefined> {
    const s = await this.read(passwordName(user));
    const hash = s?.data?.['hash'];
    return s?.metadata?.labels?.[LABEL_USER] === user && hash ? unb64(hash) : undefined;
  }

  async setPasswordHash(user: string, hash: string): Promise<void> {
    const name = passwordName(user);
    const data = { hash: b64(hash) };
    try {
      await this.p.core.patchNamespacedSecret({ name, namespace: this.p.namespace, body: { data } }, this.p.mergePatch);
      return;
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    await this.p.core.createNamespacedSecret({
      namespace: this.p.namespace,
      body: {
        metadata: { name, labels: this.p.labels({ [LABEL_KIND]: 'password', [LABEL_USER]: user }), ownerReferences: [await this.p.ownerOf(user)] },
        type: 'Opaque',
        data,
      },
    });
  }

  async deletePassword(user: string): Promise<void> {
    try {
      await this.p.core.deleteNamespacedSecret({ name: passwordName(user), namespace: this.p.namespace });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }

  private async read(name: string): Promise<k8s.V1Secret | undefined> {
    try {
      return await this.p.core.readNamespacedSecret({ name, namespace: this.p.namespace });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }
}
