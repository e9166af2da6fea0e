import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { executableName } from '../base/platform.ts';
import { AGENT, BUILDKIT, hostBinarySource, type Machine, platformPackageName, type Probe, SYNCTHING } from './host-binary.ts';

const ROOT = '/prefix/lib/node_modules/devtool';
const LINUX: Machine = { platform: 'linux', arch: 'x64' };
const WINDOWS: Machine = { platform: 'win32', arch: 'x64' };
const MAC: Machine = { platform: 'darwin', arch: 'arm64' };

/** A file system holding `files`, with the packages `packages` installed (name -> folder and version). */
function probe(files: string[], packages: Record<string, { dir: string; version: string }> = {}): Probe {
  return { exists: (p) => files.includes(p), installedPackage: (name) => packages[name] };
}

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof DevtoolError, `not a DevtoolError: ${String(err)}`);
    return err.message;
  }
  assert.fail('no error');
}

test('the platform package is named after Node’s platform and arch', () => {
  assert.equal(platformPackageName(LINUX), 'devtool-linux-x64');
  assert.equal(platformPackageName(MAC), 'devtool-darwin-arm64');
  assert.equal(platformPackageName(WINDOWS), 'devtool-win32-x64');
});

test('DEVTOOL_<NAME>_BIN wins over the platform package, and must exist', () => {
  const installed = { 'devtool-linux-x64': { dir: '/pkg', version: '1.2.3' } };
  const files = ['/opt/syncthing', '/pkg/bin/devtool-host'];
  assert.deepEqual(hostBinarySource(SYNCTHING, LINUX, { DEVTOOL_SYNCTHING_BIN: '/opt/syncthing' }, ROOT, '1.2.3', probe(files, installed)), {
    kind: 'file',
    file: '/opt/syncthing',
    args: [],
  });
  assert.equal(
    message(() => hostBinarySource(AGENT, LINUX, { DEVTOOL_AGENT_BIN: '/nowhere' }, ROOT, '1.2.3', probe(files, installed))),
    'DEVTOOL_AGENT_BIN is /nowhere, which does not exist',
  );
});

test("the platform package's host bundle is used, named as its platform names it, with the program as its first argument", () => {
  for (const machine of [LINUX, MAC, WINDOWS]) {
    const name = platformPackageName(machine);
    const dir = `/prefix/lib/node_modules/${name}`;
    const file = join(dir, 'bin', executableName('devtool-host', machine.platform));
    for (const bin of [SYNCTHING, AGENT, BUILDKIT]) {
      const source = hostBinarySource(bin, machine, {}, ROOT, '1.2.3', probe([file], { [name]: { dir, version: '1.2.3' } }));
      assert.deepEqual(source, { kind: 'file', file, args: [bin.name] });
    }
  }
});

test('a platform package of another version, or without the program, is one line naming what to install', () => {
  const dir = '/prefix/lib/node_modules/devtool-linux-x64';
  const older = { 'devtool-linux-x64': { dir, version: '1.2.2' } };
  assert.equal(
    message(() => hostBinarySource(SYNCTHING, LINUX, {}, ROOT, '1.2.3', probe([join(dir, 'bin/devtool-host')], older))),
    'devtool-linux-x64 is version 1.2.2, devtool 1.2.3: install devtool-linux-x64-1.2.3.tgz with devtool, or set DEVTOOL_SYNCTHING_BIN',
  );
  const same = { 'devtool-linux-x64': { dir, version: '1.2.3' } };
  assert.match(
    message(() => hostBinarySource(SYNCTHING, LINUX, {}, ROOT, '1.2.3', probe([], same))),
    /^devtool-linux-x64 1\.2\.3 has no .*bin\/devtool-host; install it again/,
  );
});

test('in a source checkout without a platform package, the build script builds it', () => {
  const script = join(ROOT, 'buildkit/build.sh');
  assert.deepEqual(hostBinarySource(BUILDKIT, LINUX, {}, ROOT, '1.2.3', probe([script])), { kind: 'build', script, args: ['client-path'] });
});

test('a missing platform package is the same one line for every program, with the install command', () => {
  const lines = [SYNCTHING, AGENT, BUILDKIT].map((bin) => message(() => hostBinarySource(bin, MAC, {}, ROOT, '1.2.3', probe([]))));
  assert.equal(new Set(lines).size, 1);
  assert.equal(
    lines[0],
    "the package devtool-darwin-arm64, devtool's programs for this machine, is not installed: install it with devtool " +
      '(npm install -g devtool-1.2.3.tgz devtool-darwin-arm64-1.2.3.tgz)',
  );
  assert.doesNotMatch(lines[0]!, /\n/);
});

test('a machine no release has a package for says which ones exist', () => {
  assert.equal(
    message(() => hostBinarySource(SYNCTHING, { platform: 'freebsd', arch: 'x64' }, {}, ROOT, '1.2.3', probe([]))),
    'devtool has no syncthing for freebsd/x64 (releases have linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64); set DEVTOOL_SYNCTHING_BIN to one',
  );
  assert.match(
    message(() => hostBinarySource(AGENT, { platform: 'win32', arch: 'arm64' }, {}, ROOT, '1.2.3', probe([]))),
    /no devtool-agent for win32\/arm64/,
  );
});
