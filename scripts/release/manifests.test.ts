import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { releaseAgentImage } from '../../src/dev/target.ts';
import { cliManifest, PLATFORMS, platformFiles, platformManifest, sha256Sums } from './manifests.ts';

const SOURCE = {
  name: 'devtool',
  version: '1.2.3',
  description: 'Live development environments',
  license: 'Apache-2.0',
  bin: { devtool: 'dist/devtool.cjs' },
  engines: { node: '>=20' },
};
const IMAGES = { agentImage: `registry.example.com/devtool/devtool-bin:1.2.3@sha256:${'a'.repeat(64)}` };

test('five platforms, with Go’s names for the cross-compiles', () => {
  assert.deepEqual(
    PLATFORMS.map((p) => `${p.os}-${p.cpu} ${p.goos}/${p.goarch}`),
    ['linux-x64 linux/amd64', 'linux-arm64 linux/arm64', 'darwin-x64 darwin/amd64', 'darwin-arm64 darwin/arm64', 'win32-x64 windows/amd64'],
  );
});

test('the CLI package: no dependencies, every platform package optional at its exact version, the agent image', () => {
  assert.deepEqual(cliManifest(SOURCE, IMAGES), {
    name: 'devtool',
    version: '1.2.3',
    description: 'Live development environments',
    license: 'Apache-2.0',
    bin: { devtool: 'dist/devtool.cjs' },
    engines: { node: '>=20' },
    optionalDependencies: {
      'devtool-linux-x64': '1.2.3',
      'devtool-linux-arm64': '1.2.3',
      'devtool-darwin-x64': '1.2.3',
      'devtool-darwin-arm64': '1.2.3',
      'devtool-win32-x64': '1.2.3',
    },
    devtool: { agentImage: IMAGES.agentImage },
  });
});

test('the agent image the CLI package names is the one the installed CLI reads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devtool-cli-manifest-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify(cliManifest(SOURCE, IMAGES)));
    assert.equal(releaseAgentImage(dir), IMAGES.agentImage);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a platform package: npm’s os and cpu fields, the host bundle under bin/, .exe on Windows', () => {
  const windows = PLATFORMS.find((p) => p.os === 'win32')!;
  const manifest = platformManifest(SOURCE, windows);
  assert.equal(manifest['name'], 'devtool-win32-x64');
  assert.equal(manifest['version'], '1.2.3');
  assert.deepEqual(manifest['os'], ['win32']);
  assert.deepEqual(manifest['cpu'], ['x64']);
  assert.equal(manifest['dependencies'], undefined);
  assert.deepEqual(platformFiles(windows), ['bin/devtool-host.exe']);
  assert.deepEqual(platformFiles(PLATFORMS.find((p) => p.os === 'darwin')!), ['bin/devtool-host']);
});

test('SHA256SUMS: sha256sum’s format, in path order whatever the input order', () => {
  assert.equal(
    sha256Sums([
      { path: 'npm/devtool-1.2.3.tgz', sha256: 'bb' },
      { path: 'chart/devtool-1.2.3.tgz', sha256: 'aa' },
    ]),
    'aa  chart/devtool-1.2.3.tgz\nbb  npm/devtool-1.2.3.tgz\n',
  );
});
