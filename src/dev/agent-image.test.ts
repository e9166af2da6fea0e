import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ociDigest } from '../image/oci-push.ts';
import { devtoolBinImage, ustar } from './agent-image.ts';

const programs = { agent: Buffer.from('agent program\n'), syncthing: Buffer.alloc(1500, 7), arch: 'arm64', version: '0.1.0' };

test("the layer is agent/build.sh's: /devtool-bin with both programs, 0755, owner 0:0, mtime 0, as tar reads it", () => {
  const layer = devtoolBinImage(programs).blobs[0]!;
  assert.equal(layer.mediaType, 'application/vnd.oci.image.layer.v1.tar');
  const dir = mkdtempSync(join(tmpdir(), 'devtool-layer-'));
  const listed = spawnSync('tar', ['-tvf', '-', '--numeric-owner'], { input: layer.bytes, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  const rows = listed.stdout.trim().split('\n');
  assert.deepEqual(
    rows.map((r) => r.split(/\s+/).filter((_, i) => i !== 2 && i !== 3 && i !== 4)),
    [
      ['drwxr-xr-x', '0/0', 'devtool-bin/'],
      ['-rwxr-xr-x', '0/0', 'devtool-bin/devtool-agent'],
      ['-rwxr-xr-x', '0/0', 'devtool-bin/syncthing'],
    ],
  );
  assert.ok(
    rows.every((r) => r.includes('1970-01-01')),
    listed.stdout,
  );
  const x = spawnSync('tar', ['-xf', '-', '-C', dir], { input: layer.bytes });
  assert.equal(x.status, 0);
  assert.deepEqual(readFileSync(join(dir, 'devtool-bin', 'syncthing')), programs.syncthing);
  assert.equal(statSync(join(dir, 'devtool-bin', 'devtool-agent')).mode & 0o777, 0o755);
});

test("from a release's host bundle the layer holds the agent only: Syncthing is inside it", () => {
  const { agent, arch, version } = programs;
  const listed = spawnSync('tar', ['-tf', '-'], { input: devtoolBinImage({ agent, arch, version }).blobs[0]!.bytes, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(listed.stdout.trim().split('\n'), ['devtool-bin/', 'devtool-bin/devtool-agent']);
});

test('config, manifest and index describe one linux image of the architecture, run as 65532 with the installer as entrypoint', () => {
  const image = devtoolBinImage(programs);
  const [layer, config] = image.blobs;
  const cfg = JSON.parse(config!.bytes.toString()) as {
    architecture: string;
    os: string;
    config: { User: string; Entrypoint: string[] };
    rootfs: { diff_ids: string[] };
  };
  assert.equal(cfg.architecture, 'arm64');
  assert.equal(cfg.os, 'linux');
  assert.equal(cfg.config.User, '65532:65532');
  assert.deepEqual(cfg.config.Entrypoint, ['/devtool-bin/devtool-agent', 'install', '/devtool/bin']);
  assert.deepEqual(cfg.rootfs.diff_ids, [ociDigest(layer!.bytes)]);
  const manifest = JSON.parse(image.manifests[0]!.bytes.toString()) as { config: { digest: string }; layers: { size: number }[] };
  assert.equal(manifest.config.digest, ociDigest(config!.bytes));
  assert.equal(manifest.layers[0]!.size, layer!.bytes.length);
  const index = JSON.parse(image.index.bytes.toString()) as { mediaType: string; manifests: { digest: string; platform: object }[] };
  assert.equal(index.mediaType, 'application/vnd.oci.image.index.v1+json');
  assert.deepEqual(index.manifests[0]!.platform, { architecture: 'arm64', os: 'linux' });
  assert.equal(index.manifests[0]!.digest, ociDigest(image.manifests[0]!.bytes));
});

test('the same programs give the same digest; other programs another', () => {
  assert.equal(ociDigest(devtoolBinImage(programs).index.bytes), ociDigest(devtoolBinImage({ ...programs }).index.bytes));
  assert.notEqual(ociDigest(devtoolBinImage(programs).index.bytes), ociDigest(devtoolBinImage({ ...programs, agent: Buffer.from('x') }).index.bytes));
  assert.equal(ustar([]).length, 1024, 'an empty archive is its two zero blocks');
});
