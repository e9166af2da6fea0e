/**
 * An image made in memory, pushed through the Registry HTTP API v2 (as crane does, without a Docker
 * daemon or BuildKit): each blob unless the registry has it (HEAD, then a monolithic upload: POST,
 * PUT with the digest), each image manifest by its digest, and the index under its tag. Plain HTTP
 * for loopback registries (as Docker does), HTTPS otherwise; the registry's token (Bearer) or
 * Basic authentication when it asks for it (registry.ts).
 */
import { createHash } from 'node:crypto';
import { DevtoolError } from '../base/errors.ts';
import type { RegistryCredentials } from './docker-config.ts';
import { isLoopbackRegistry, registryApiHost } from './reference.ts';
import { authorize } from './registry.ts';

export interface OciContent {
  readonly mediaType: string;
  readonly bytes: Buffer;
}

export interface OciImage {
  /** Layers and configs. */
  readonly blobs: readonly OciContent[];
  /** The image manifests the index lists. */
  readonly manifests: readonly OciContent[];
  /** Pushed under the tag. */
  readonly index: OciContent;
}

/** `sha256:<hex>` of some bytes: an OCI descriptor's digest. */
export function ociDigest(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A descriptor of content (OCI image spec). */
export function descriptor(c: OciContent, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { mediaType: c.mediaType, digest: ociDigest(c.bytes), size: c.bytes.length, ...more };
}

const PUSH_TIMEOUT_MS = 120_000;

/** Pushes `image` to `registry`/`repository`:`tag`; resolves with the index's digest. */
export async function pushOciImage(
  registry: string,
  repository: string,
  tag: string,
  image: OciImage,
  creds: RegistryCredentials | undefined,
): Promise<string> {
  const base = `${isLoopbackRegistry(registry) ? 'http' : 'https'}://${registryApiHost(registry)}/v2/${repository}`;
  const signal = AbortSignal.timeout(PUSH_TIMEOUT_MS);
  let authorization: string | undefined;
  const call = async (method: string, url: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Response> => {
    const send = () =>
      fetch(url, {
        method,
        headers: { ...headers, ...(authorization ? { Authorization: authorization } : {}) },
        signal,
        ...(body ? { body: new Uint8Array(body) } : {}),
      });
    let res = await send();
    if (res.status === 401 && !authorization) {
      authorization = await authorize(res.headers.get('www-authenticate') ?? '', repository, creds, signal, 'pull,push');
      if (authorization) res = await send();
    }
    return res;
  };
  const expect = async (res: Response, ok: number[], what: string) => {
    if (ok.includes(res.status)) return;
    const text = (await res.text().catch(() => '')).replace(/\s+/g, ' ').slice(0, 200);
    throw new DevtoolError(`cannot push ${what} to ${registry}/${repository}: HTTP ${res.status}${text ? ` ${text}` : ''}`);
  };

  for (const blob of image.blobs) {
    const digest = ociDigest(blob.bytes);
    if ((await call('HEAD', `${base}/blobs/${digest}`)).status === 200) continue;
    const started = await call('POST', `${base}/blobs/uploads/`);
    await expect(started, [202], `blob ${digest}`);
    const location = new URL(started.headers.get('location') ?? '', `${base}/`);
    location.searchParams.set('digest', digest);
    await expect(await call('PUT', location.href, { 'Content-Type': 'application/octet-stream' }, blob.bytes), [201], `blob ${digest}`);
  }
  for (const m of image.manifests) {
    const digest = ociDigest(m.bytes);
    await expect(await call('PUT', `${base}/manifests/${digest}`, { 'Content-Type': m.mediaType }, m.bytes), [200, 201], `manifest ${digest}`);
  }
  await expect(
    await call('PUT', `${base}/manifests/${encodeURIComponent(tag)}`, { 'Content-Type': image.index.mediaType }, image.index.bytes),
    [200, 201],
    `tag ${tag}`,
  );
  return ociDigest(image.index.bytes);
}
