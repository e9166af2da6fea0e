import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layoutIndexDigest, releaseImageReference, releaseRegistry } from './image-ref.ts';

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
const INDEX = 'application/vnd.oci.image.index.v1+json';
const WHERE = 'release/images/devtool-bin-1.2.3.tar';

/** index.json as scripts/release/oci.sh's finish_layout writes it. */
function layout(...manifests: object[]): string {
  return JSON.stringify({ schemaVersion: 2, manifests });
}
const tagged = (more: object = {}) => ({
  mediaType: INDEX,
  digest: DIGEST,
  size: 754,
  annotations: { 'org.opencontainers.image.ref.name': '1.2.3' },
  ...more,
});

test('the index digest of a layout as images.sh writes it', () => {
  assert.equal(layoutIndexDigest(layout(tagged()), '1.2.3', WHERE), DIGEST);
});

test('a layout that is not one image index of this version: one line naming the archive', () => {
  const refused: [string, RegExp][] = [
    ['{', /^Error: release\/images\/devtool-bin-1\.2\.3\.tar: index\.json is not JSON$/],
    [layout(), /: index\.json names 0 images, not one image index$/],
    [layout(tagged(), tagged()), /: index\.json names 2 images, not one image index$/],
    [
      layout(tagged({ mediaType: 'application/vnd.oci.image.manifest.v1+json' })),
      /names a application\/vnd\.oci\.image\.manifest\.v1\+json, not an image index$/,
    ],
    [layout(tagged({ digest: 'sha256:abc' })), /names no sha256 digest \(sha256:abc\)$/],
    [layout(tagged({ annotations: { 'org.opencontainers.image.ref.name': '1.2.2' } })), /the index is tagged 1\.2\.2, not this release's version 1\.2\.3$/],
    [layout(tagged({ annotations: undefined })), /the index is tagged undefined, not this release's version 1\.2\.3$/],
  ];
  for (const [json, message] of refused) assert.throws(() => layoutIndexDigest(json, '1.2.3', WHERE), message, json);
});

test('a release image by tag and digest', () => {
  assert.equal(releaseImageReference('unreachable.invalid/devtool', 'devtool-bin', '1.2.3', DIGEST), `unreachable.invalid/devtool/devtool-bin:1.2.3@${DIGEST}`);
});

test('the release registry: host, port and path as a repository allows, as it is', () => {
  for (const ok of ['ghcr.io/devtool-dev', 'localhost:5000/team', 'registry.example.com', 'unreachable.invalid/devtool', 'r.io/a/b_c/d.e']) {
    assert.equal(releaseRegistry(ok, 'DEVTOOL_RELEASE_REGISTRY'), ok);
  }
  for (const bad of ['', 'ghcr.io/devtool-dev/', ' ghcr.io/x', 'ghcr.io/DevTool', 'https://ghcr.io/x', 'ghcr.io//x', 'ghcr.io/x y', 'ghcr.io/x:1']) {
    assert.throws(
      () => releaseRegistry(bad, 'DEVTOOL_RELEASE_REGISTRY'),
      new RegExp(`^Error: DEVTOOL_RELEASE_REGISTRY '${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}' is not a registry`),
      bad,
    );
  }
});
