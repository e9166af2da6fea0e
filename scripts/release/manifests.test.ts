import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliManifest, PLATFORMS, platformFiles, platformManifest, sha256Sums } from './manifests.ts';

const SOURCE = {
  name: 'devtool',
  version: '1.2.3',
  description: 'Live development environments',
  license: 'Apache-2.0',
  bin: { devtool: 'dist/devtool.cjs' },
  engines: { node: '>=20' },
};

test('five platforms, with Go’s names for the cross-compiles', () => {
  assert.deepEqual(
    PLATFORMS.map((p) => `${p.os}-${p.cpu} ${p.goos}/${p.goarch}`),
    ['linux-x64 linux/amd64', 'linux-arm64 linux/arm64', 'darwin-x64 darwin/amd64', 'darwin-arm64 darwin/arm64', 'win32-x64 windows/amd64'],
  );
});

test('the CLI package: no dependencies, every platform package optional at its exact version', () => {
  assert.deepEqual(cliManifest(SOURCE), {
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
  });
});

test('a platform package: npm’s os and cpu fields, the programs under bin/, .exe on Windows', () => {
  const windows = PLATFORMS.find((p) => p.os === 'win32')!;
  const manifest = platformManifest(SOURCE, windows);
  assert.equal(manifest['name'], 'devtool-win32-x64');
  assert.equal(manifest['version'], '1.2.3');
  assert.deepEqual(manifest['os'], ['win32']);
  assert.deepEqual(manifest['cpu'], ['x64']);
  assert.equal(manifest['dependencies'], undefined);
  assert.deepEqual(platformFiles(windows), ['bin/syncthing.exe', 'bin/devtool-agent.exe', 'bin/devtool-buildkit.exe']);
  assert.deepEqual(platformFiles(PLATFORMS.find((p) => p.os === 'darwin')!), ['bin/syncthing', 'bin/devtool-agent', 'bin/devtool-buildkit']);
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
