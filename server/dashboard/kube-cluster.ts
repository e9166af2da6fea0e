/**
 * The dashboard's cluster on Kubernetes: every call acts with a short-lived token of a user's own
 * ServiceAccount (kube-credentials.ts), never with the service's rights. Lists for a page and
 * access reviews use the viewing user's token; a shared watch uses the namespace owner's.
 */
import type { KubeCredentialSource } from '../kube-credentials.ts';
import { type HubCluster, ownerGone, type WatchSink } from './hub.ts';
import { KIND_API, type Kind } from './model.ts';
import { KubeHttpError, type KubeHttp, kubeHttp } from './kube-http.ts';
import { statusOf } from '../store/kube-calls.ts';

export interface DashboardCluster extends HubCluster {
  /** The objects of `kind` in `namespace` as `user` lists them; 'forbidden' when it may not. */
  list(user: string, namespace: string, kind: Kind): Promise<unknown[] | 'forbidden'>;
  /**
   * A container's log as `user` reads it (pods/log), each line with its timestamp (`<RFC 3339> <text>`):
   * its last `tail` lines, then, with `follow`, each new one until the container ends or `signal`
   * aborts. 'forbidden' when the user may not read it; 'unavailable' when there is none (not started, pod gone).
   */
  podLog(user: string, namespace: string, at: PodLogAt, line: (raw: string) => void, signal: AbortSignal): Promise<PodLogEnd>;
}

export type PodLogEnd = 'ended' | 'forbidden' | 'unavailable';

export interface PodLogAt {
  pod: string;
  container: string;
  tail: number;
  follow: boolean;
}

/** A token is reused this long at most (and never in its last minute). */
const TOKEN_REUSE_MS = 5 * 60_000;
/** The API server ends a watch after this, and the next one starts with a fresh token. */
const WATCH_SECONDS = 300;
const BACKOFF_MAX_MS = 30_000;

function query(kind: Kind, extra: Record<string, string>): string {
  const api = KIND_API[kind];
  const q = new URLSearchParams({ ...(api.labelSelector ? { labelSelector: api.labelSelector } : {}), ...extra });
  return q.size ? `?${q}` : '';
}

/** The dashboard's cluster acting with tokens of users' ServiceAccounts from `source`. */
export function kubeDashboardCluster(source: KubeCredentialSource, onError: (err: unknown, what: string) => void): DashboardCluster {
  return dashboardCluster(userTokens(source), onError);
}

/** The API server as a user, with a token of its ServiceAccount made by `source` and reused a few minutes. */
function userTokens(source: KubeCredentialSource): (user: string) => Promise<KubeHttp> {
  const tokens = new Map<string, { http: Promise<KubeHttp>; until: number }>();
  const as = (user: string): Promise<KubeHttp> => {
    const now = Date.now();
    const cached = tokens.get(user);
    if (cached && cached.until > now) return cached.http;
    const entry = { http: undefined as unknown as Promise<KubeHttp>, until: now + TOKEN_REUSE_MS };
    entry.http = (async () => {
      const { token, expiresAt } = await source.issuer.issue(user, source.tokenSeconds);
      entry.until = Math.min(entry.until, Date.parse(expiresAt) - 60_000);
      const { userKubeConfig } = await import('../pipelines/kube-cluster.ts');
      return kubeHttp(await userKubeConfig(token));
    })();
    for (const [name, t] of tokens) if (t.until <= now) tokens.delete(name);
    tokens.set(user, entry);
    const http = entry.http;
    http.catch(() => tokens.delete(user));
    return http;
  };
  return as;
}

/**
 * Why a shared watch acting as `owner` gives up for good, or undefined when it may try again: the
 * owner's ServiceAccount is gone (its token cannot be issued: 404), or the owner may not read there
 * any more (401, 403). Anything else (the API server unreachable, a watch ended) is retried.
 */
export function giveUp(err: unknown, owner: string): string | undefined {
  const status = err instanceof KubeHttpError ? err.status : statusOf(err);
  if (status === 404 && !(err instanceof KubeHttpError)) return ownerGone(owner);
  if (status === 401 || status === 403) return `the namespace's owner ${owner} may not read it any more`;
  return undefined;
}

/** The dashboard's cluster over `as(user)`: the API server acting as that user (a fake in the unit tests). */
export function dashboardCluster(as: (user: string) => Promise<KubeHttp>, onError: (err: unknown, what: string) => void): DashboardCluster {
  const list = async (http: KubeHttp, namespace: string, kind: Kind) =>
    (await http.get(KIND_API[kind].path(namespace) + query(kind, {}))) as { items?: unknown[]; metadata?: { resourceVersion?: string } };

  return {
    async list(user, namespace, kind) {
      try {
        return (await list(await as(user), namespace, kind)).items ?? [];
      } catch (err) {
        if (err instanceof KubeHttpError && (err.status === 403 || err.status === 404)) return 'forbidden';
        throw err;
      }
    },

    async podLog(user, namespace, at, line, signal) {
      const q = new URLSearchParams({ container: at.container, tailLines: String(at.tail), timestamps: 'true', ...(at.follow ? { follow: 'true' } : {}) });
      try {
        await (await as(user)).lines(`/api/v1/namespaces/${namespace}/pods/${encodeURIComponent(at.pod)}/log?${q}`, line, signal);
        return 'ended';
      } catch (err) {
        if (err instanceof KubeHttpError && err.status === 403) return 'forbidden';
        // 400: the container has not started yet; 404: its pod is gone.
        if (err instanceof KubeHttpError && (err.status === 400 || err.status === 404)) return 'unavailable';
        throw err;
      }
    },

    async mayWatch(user, namespace, kind) {
      const http = await as(user);
      const { group, resource } = KIND_API[kind];
      const review = (verb: string) =>
        http.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { namespace, verb, group, resource } },
        }) as Promise<{ status?: { allowed?: boolean } }>;
      const answers = await Promise.all([review('list'), review('watch')]);
      return answers.every((a) => a.status?.allowed === true);
    },

    watch(owner, namespace, kind, sink: WatchSink) {
      const stop = new AbortController();
      void (async () => {
        let backoff = 1000;
        let version: string | undefined;
        while (!stop.signal.aborted) {
          try {
            const http = await as(owner);
            if (!version) {
              const answer = await list(http, namespace, kind);
              version = answer.metadata?.resourceVersion;
              sink.reset(answer.items ?? []);
            }
            const path =
              KIND_API[kind].path(namespace) +
              query(kind, { watch: '1', allowWatchBookmarks: 'true', timeoutSeconds: String(WATCH_SECONDS), resourceVersion: version ?? '' });
            await http.stream(
              path,
              (value) => {
                const e = value as { type?: string; object?: { metadata?: { resourceVersion?: string }; code?: number } };
                if (e.type === 'ERROR') {
                  version = undefined; // 410 Gone: too old, list again
                  return;
                }
                if (e.object?.metadata?.resourceVersion) version = e.object.metadata.resourceVersion;
                if (e.type === 'ADDED' || e.type === 'MODIFIED') sink.put(e.object);
                else if (e.type === 'DELETED') sink.remove(e.object);
              },
              stop.signal,
            );
            backoff = 1000;
          } catch (err) {
            if (stop.signal.aborted) return;
            const given = giveUp(err, owner);
            if (given) return sink.fail(given);
            onError(err, `watch of ${kind} in ${namespace}`);
            version = undefined;
            await new Promise((r) => setTimeout(r, backoff).unref());
            backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
          }
        }
      })();
      return () => stop.abort();
    },
  };
}
