/**
 * Is an image already pushed? The registry is asked directly (registry.ts). When this machine cannot
 * reach it, the builder that would push the image is asked instead: it reaches the registry the way
 * its push will. That is how a pipeline runner's pod, which cannot reach a registry on the node's
 * loopback, still skips images its hosted builder finds there.
 */
import type { BuildBackend } from './backend.ts';
import type { RegistryCredentials } from './docker-config.ts';
import { formatReference } from './reference.ts';
import { lookupTag, type TagLookup } from './registry.ts';

export interface PushedImage {
  readonly registry: string;
  readonly repository: string;
  readonly tag: string;
}

/** A lookup's answer, and which builder gave it when the registry could not be asked directly. */
export type PushedLookup = TagLookup & { readonly askedThrough?: string };

export async function lookupPushed(
  image: PushedImage,
  credentials: RegistryCredentials | undefined,
  builder: () => Promise<BuildBackend>,
  signal?: AbortSignal,
): Promise<PushedLookup> {
  const direct = await lookupTag(image.registry, image.repository, image.tag, credentials);
  if (direct.state !== 'unknown') return direct;
  const backend = await builder();
  if (!backend.lookup) return direct;
  const through = await backend.lookup(formatReference(image), signal);
  if (through.state === 'unknown') return { state: 'unknown', reason: `${direct.reason}; ${through.reason}` };
  return { ...through, askedThrough: backend.name };
}

/** " (asked through BUILDER)" when a builder answered, for the line saying an image is up to date. */
export function askedThrough(found: PushedLookup): string {
  return found.askedThrough ? ` (asked through ${found.askedThrough})` : '';
}
