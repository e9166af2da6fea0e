/**
 * The release's images as the release names them: `<registry>/<name>:<version>@<digest>`, the
 * digest being that of the image index in the image's archive (an OCI image layout written by
 * images.sh, whose index.json names one index, tagged with the version). chart.sh names the chart's
 * images the same way; the CLI package names its devtool-bin image so (npm.ts). Pure: the caller
 * reads the files.
 */

const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const REF_NAME = 'org.opencontainers.image.ref.name';

/**
 * The digest of the image index an OCI layout's index.json names, as images.sh writes it: one
 * index, tagged `version`. `where` names the archive in the error of anything else.
 */
export function layoutIndexDigest(indexJson: string, version: string, where: string): string {
  let layout: { manifests?: { mediaType?: unknown; digest?: unknown; annotations?: Record<string, unknown> }[] };
  try {
    layout = JSON.parse(indexJson);
  } catch {
    throw new Error(`${where}: index.json is not JSON`);
  }
  const manifests = Array.isArray(layout?.manifests) ? layout.manifests : [];
  if (manifests.length !== 1) throw new Error(`${where}: index.json names ${manifests.length} images, not one image index`);
  const [index] = manifests as [NonNullable<typeof layout.manifests>[number]];
  if (index.mediaType !== OCI_INDEX) throw new Error(`${where}: index.json names a ${String(index.mediaType)}, not an image index`);
  if (typeof index.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(index.digest)) {
    throw new Error(`${where}: index.json names no sha256 digest (${String(index.digest)})`);
  }
  const tag = index.annotations?.[REF_NAME];
  if (tag !== version) throw new Error(`${where}: the index is tagged ${String(tag)}, not this release's version ${version}`);
  return index.digest;
}

/**
 * A registry and namespace images can be named under (`host[:port][/path]`, lower case, as an image
 * reference's repository allows); `what` names the setting in the error. Taken as it is, never
 * trimmed: images.sh and chart.sh name the images with the same value (registry.sh).
 */
export function releaseRegistry(value: string, what: string): string {
  const component = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
  const host = '[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?';
  if (!new RegExp(`^${host}(?:/${component})*$`).test(value)) {
    throw new Error(`${what} '${value}' is not a registry to name images under (host[:port][/path], e.g. ghcr.io/devtool-dev)`);
  }
  return value;
}

/** The release's image `name` by tag and digest, so that it runs exactly what was released. */
export function releaseImageReference(registry: string, name: string, version: string, digest: string): string {
  return `${registry}/${name}:${version}@${digest}`;
}
