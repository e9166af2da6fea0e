/**
 * Image references as Docker reads them: `[REGISTRY/]REPOSITORY[:TAG][@DIGEST]`, where the first
 * path component is a registry when it has a `.` or a `:` or is `localhost` (else the registry is
 * Docker Hub, and a one-component repository lives under `library/`).
 */
import { DevtoolError } from '../base/errors.ts';

export const DOCKER_HUB = 'docker.io';

export interface ImageReference {
  /** Registry host (with port), e.g. `localhost:5000`, `docker.io`. */
  readonly registry: string;
  /** Repository path inside the registry, e.g. `team/api`. */
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const REPOSITORY_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

/** Parses a reference; a wrong one is a DevtoolError naming `what` (e.g. "build.api.image"). */
export function parseReference(text: string, what = 'image reference'): ImageReference {
  const bad = (why: string) => new DevtoolError(`${what}: invalid image reference ${JSON.stringify(text)}: ${why}`);
  let rest = text.trim();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/.test(digest)) throw bad('the digest must look like sha256:<hex>');
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad('a tag is up to 128 letters, digits, "_", "." and "-", not starting with "." or "-"');
  }
  const parts = rest.split('/');
  let registry = DOCKER_HUB;
  if (parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!)) registry = parts.shift()!;
  if (registry === 'index.docker.io' || registry === 'registry-1.docker.io') registry = DOCKER_HUB;
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  if (parts.length === 0 || parts.some((p) => !REPOSITORY_COMPONENT.test(p))) {
    throw bad('repository names are lower-case letters and digits, separated by ".", "_", "__" or "-", with "/" between components');
  }
  return { registry, repository: parts.join('/'), ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** `registry/repository[:tag][@digest]`, the form pushed and exported to deploy commands. */
export function formatReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag !== undefined ? `:${ref.tag}` : ''}${ref.digest !== undefined ? `@${ref.digest}` : ''}`;
}

/** A valid repository path component made from any name (environment and image names). */
export function repositoryComponent(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/[._-]*([._-])[._-]*/g, '$1')
    .replace(/^[._-]+|[._-]+$/g, '');
  return cleaned || 'image';
}

/** Registries that Docker talks to over plain HTTP by default: loopback ones. */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** The host that serves a registry's HTTP API (Docker Hub's differs from its name). */
export function registryApiHost(registry: string): string {
  return registry === DOCKER_HUB ? 'registry-1.docker.io' : registry;
}
