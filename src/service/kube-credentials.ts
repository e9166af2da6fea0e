/**
 * The user's Kubernetes credentials on a service context: a short-lived token of the user's own
 * ServiceAccount, from the service's `POST /kube-credentials`, cached in the devtool home (0600)
 * and fetched again shortly before it expires. Both the credential plugin `devtool kubetoken` (what
 * kubectl runs) and the CLI's own cluster client read them here, so a long `up` never outlives
 * its token and kubectl does not ask the service on every call.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sha256 } from '../base/hash.ts';
import { writeFileAtomic } from '../io/atomic-file.ts';
import type { KubeCredentialsBody } from '../../api/routes.ts';

export interface CachedKubeCredentials extends KubeCredentialsBody {
  /** When this machine received them: with expiresAt, the token's lifetime. */
  fetchedAt: string;
}

/** Where the service's credentials come from (the service client's `kubeCredentials`). */
export type KubeCredentialFetch = () => Promise<KubeCredentialsBody>;

/** At most this long before expiry a token is replaced... */
const MAX_MARGIN_MS = 5 * 60_000;

/**
 * True when the credentials should be fetched again: past a quarter of their lifetime before
 * expiry, and at most 5 minutes before it (a 1 h token lasts 55 min here, a 10 min one 7.5 min).
 * The margin covers a clock a little off and a request sent just before the end.
 */
export function needsRefresh(c: Pick<CachedKubeCredentials, 'fetchedAt' | 'expiresAt'>, now: Date): boolean {
  const expires = Date.parse(c.expiresAt);
  const fetched = Date.parse(c.fetchedAt);
  if (Number.isNaN(expires) || Number.isNaN(fetched)) return true;
  const margin = Math.min(MAX_MARGIN_MS, Math.max(0, expires - fetched) / 4);
  return now.getTime() >= expires - margin;
}

/** What `devtool kubetoken` prints: an ExecCredential of client.authentication.k8s.io/v1. */
export function execCredential(c: Pick<KubeCredentialsBody, 'token' | 'expiresAt'>): string {
  return `${JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token: c.token, expirationTimestamp: new Date(c.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z') },
  })}\n`;
}

/** The cache file of one service URL and API token (another login gets its own file). */
export function kubeCredentialFile(homeRoot: string, url: string, apiToken: string): string {
  return join(homeRoot, 'kube-credentials', `${sha256(`${url}\n${apiToken}`).slice(0, 32)}.json`);
}

/**
 * One context's credentials: `current()` answers from memory while they are fresh, else from the
 * file (another devtool process may have refreshed it), else asks the service, once however many
 * requests wait.
 */
export class KubeCredentialCache {
  private held: CachedKubeCredentials | undefined;
  private pending: Promise<CachedKubeCredentials> | undefined;

  constructor(
    readonly file: string,
    private readonly fetchFromService: KubeCredentialFetch,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async current(): Promise<CachedKubeCredentials> {
    if (this.held && !needsRefresh(this.held, this.now())) return this.held;
    this.pending ??= this.refresh().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async refresh(): Promise<CachedKubeCredentials> {
    let credentials = this.read();
    if (!credentials || needsRefresh(credentials, this.now())) {
      const fetchedAt = this.now().toISOString();
      credentials = { ...(await this.fetchFromService()), fetchedAt };
      writeFileAtomic(this.file, `${JSON.stringify(credentials)}\n`, 0o600);
    }
    this.held = credentials;
    return credentials;
  }

  private read(): CachedKubeCredentials | undefined {
    if (!existsSync(this.file)) return undefined;
    try {
      const c = JSON.parse(readFileSync(this.file, 'utf8')) as CachedKubeCredentials;
      return typeof c.token === 'string' && typeof c.server === 'string' ? c : undefined;
    } catch {
      // A damaged cache is only a cache: fetch again.
      rmSync(this.file, { force: true });
      return undefined;
    }
  }
}
