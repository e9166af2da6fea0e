import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { agentPrograms, linuxPackage, noProgramsMessage, platformPackageDirs } from './agent-binaries.ts';

/** A package folder `devtool` inside a node_modules, as a global install lays it out. */
function installed(): { modules: string; root: string } {
  const modules = join(mkdtempSync(join(tmpdir(), 'devtool-install-')), 'node_modules');
  const root = join(modules, 'devtool');
  mkdirSync(root, { recursive: true });
  return { modules, root };
}

/** A platform package as a release packs it: the host bundle only. */
function platformPackage(dir: string): void {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(join(dir, 'bin', 'devtool-host'), 'the agent, Syncthing and the BuildKit client');
}

test("the platform package of a node's architecture, by npm's name for it", () => {
  assert.equal(linuxPackage('amd64'), 'devtool-linux-x64');
  assert.equal(linuxPackage('arm64'), 'devtool-linux-arm64');
  assert.deepEqual(platformPackageDirs('/p/lib/node_modules/devtool', 'arm64'), [
    '/p/lib/node_modules/devtool/node_modules/devtool-linux-arm64',
    '/p/lib/node_modules/devtool-linux-arm64',
  ]);
});

test('a global install finds the host bundle in the platform package beside it: the agent, Syncthing inside', async () => {
  const { modules, root } = installed();
  platformPackage(join(modules, 'devtool-linux-x64'));
  assert.deepEqual(await agentPrograms('amd64', {}, root), { agent: join(modules, 'devtool-linux-x64', 'bin', 'devtool-host') });
});

test('a local install finds them in its own node_modules', async () => {
  const { root } = installed();
  platformPackage(join(root, 'node_modules', 'devtool-linux-arm64'));
  assert.equal((await agentPrograms('arm64', {}, root)).agent, join(root, 'node_modules', 'devtool-linux-arm64', 'bin', 'devtool-host'));
});

test('an install without the programs for the architecture (and no checkout to build them) says in one line what to install or set', async () => {
  const { modules, root } = installed();
  // The package of the other architecture is no help.
  platformPackage(join(modules, 'devtool-linux-x64'));
  await assert.rejects(agentPrograms('arm64', {}, root), (err: Error) => err instanceof DevtoolError && err.message === noProgramsMessage('arm64'));
  assert.match(
    noProgramsMessage('arm64'),
    /^this devtool install has no agent for linux\/arm64 .*: install devtool-linux-arm64 beside devtool, or set DEVTOOL_BIN_IMAGE/,
  );
  assert.doesNotMatch(noProgramsMessage('arm64'), /\n/);
});
