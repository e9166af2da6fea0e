/**
 * Is this tag already in the registry? One `HEAD /v2/<repository>/manifests/<tag>` of the Registry
 * HTTP API v2, over plain HTTP for loopback registries (as Docker does) and HTTPS otherwise, with
 * the registry's token (Bearer) or Basic authentication when it asks for it. It answers quickly
 * or not at all: a registry that cannot be asked means "unknown", and the image is built (the push
 * then reports the registry's real problem).
 */
import type { RegistryCredentials } from './docker-config.ts';
import { isLoopbackRegistry, registryApiHost } from './reference.ts';

export type TagLookup =
  | { readonly state: 'present'; readonly digest?: string }
  | { readonly state: 'absent' }
  | { readonly state: 'unknown'; readonly reason: string };

const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

export const REGISTRY_TIMEOUT_MS = 5000;

export async function lookupTag(
  registry: string,
  repository: string,
  tag: string,
  creds: RegistryCredentials | undefined,
  timeoutMs = REGISTRY_TIMEOUT_MS,
): Promise<TagLookup> {
  const base = `${isLoopbackRegistry(registry) ? 'http' : 'https'}://${registryApiHost(registry)}`;
  const url = `${base}/v2/${repository}/manifests/${encodeURIComponent(tag)}`;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    let res = await fetch(url, { method: 'HEAD', headers: { Accept: MANIFEST_TYPES }, signal });
    if (res.status === 401) {
      const authorization = await authorize(res.headers.get('www-authenticate') ?? '', repository, creds, signal);
      if (authorization) res = await fetch(url, { method: 'HEAD', headers: { Accept: MANIFEST_TYPES, Authorization: authorization }, signal });
    }
    if (res.status === 200) {
      const digest = res.headers.get('docker-content-digest');
      return digest ? { state: 'present', digest } : { state: 'present' };
    }
    if (res.status === 404) return { state: 'absent' };
    return { state: 'unknown', reason: `${base} answered HTTP ${res.status}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000}s` : (e.cause?.code ?? e.message);
    return { state: 'unknown', reason: `${base}: ${why}` };
  }
}

/**
 * The Authorization header answering a challenge (RFC 6750 Bearer via the token service, or Basic),
 * for `actions` on the repository when the challenge names no scope.
 */
export async function authorize(
  challenge: string,
  repository: string,
  creds: RegistryCredentials | undefined,
  signal: AbortSignal,
  actions = 'pull',
): Promise<string | undefined> {
  const scheme = challenge.split(' ', 1)[0]!.toLowerCase();
  const basic = creds && !creds.identityToken ? `Basic ${Buffer.from(`${creds.username ?? ''}:${creds.password ?? ''}`).toString('base64')}` : undefined;
  if (scheme === 'basic') return basic;
  if (scheme !== 'bearer') return undefined;
  const params = parseChallenge(challenge.slice(scheme.length));
  if (!params.realm) return undefined;
  const tokenUrl = new URL(params.realm);
  if (params.service) tokenUrl.searchParams.set('service', params.service);
  tokenUrl.searchParams.set('scope', params.scope ?? `repository:${repository}:${actions}`);
  let res: Response;
  if (creds?.identityToken) {
    const body = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: creds.identityToken,
      service: params.service ?? '',
      scope: tokenUrl.searchParams.get('scope')!,
      client_id: 'devtool',
    });
    res = await fetch(params.realm, { method: 'POST', body, signal });
  } else {
    res = await fetch(tokenUrl, { headers: basic ? { Authorization: basic } : {}, signal });
  }
  if (!res.ok) return undefined;
  const json = (await res.json()) as { token?: string; access_token?: string };
  const token = json.token ?? json.access_token;
  return token ? `Bearer ${token}` : undefined;
}

/** `realm="https://auth.docker.io/token",service="registry.docker.io",scope="..."` -> fields. */
export function parseChallenge(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g))
    out[m[1]!.toLowerCase()] = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
  return out;
}
