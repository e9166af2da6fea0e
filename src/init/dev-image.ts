/**
 * The image `init` writes for a dev container that has nothing else to run (no Dockerfile, nothing
 * to swap): the language's image, taken from the context's registry when that registry holds a
 * copy under the same path (`localhost:5000/node:20` for `node:20`), as registries of clusters
 * that cannot reach public ones do. The cluster pulls from its registry; a public image it may not
 * reach is written only when no copy is found (and init says so).
 */
import { parseReference } from '../image/reference.ts';
import { DockerCredentials } from '../image/docker-config.ts';
import { lookupTag } from '../image/registry.ts';

/** Quick: init never waits long on a registry; a registry that does not answer is one without a copy. */
const LOOKUP_TIMEOUT_MS = 3000;

/** `<registry>/<path of the image without its registry and Docker Hub's library/>`, when that tag is in the registry. */
export async function registryCopy(image: string, registry: string | undefined, env: Readonly<NodeJS.ProcessEnv>): Promise<string | undefined> {
  const base = registry?.trim().replace(/\/+$/, '');
  if (!base) return undefined;
  const ref = parseReference(image);
  const path = ref.repository.replace(/^library\//, '');
  const [host, ...prefix] = base.split('/');
  const repository = [...prefix, path].join('/');
  const tag = ref.tag ?? 'latest';
  const found = await lookupTag(host!, repository, tag, await DockerCredentials.load(env).forRegistry(host!), LOOKUP_TIMEOUT_MS);
  return found.state === 'present' ? `${base}/${path}:${tag}` : undefined;
}
