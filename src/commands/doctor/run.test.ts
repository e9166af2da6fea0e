import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { strFromU8, unzipSync } from 'fflate';
import { DevtoolError, ExitCode } from '../../base/errors.ts';
import type { Factory } from '../../factory.ts';
import { commandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';

const unzip = (path: string) => Object.fromEntries(Object.entries(unzipSync(readFileSync(path))).map(([name, data]) => [name, strFromU8(data)]));

test('without a manifest: the file is written from what there is, its path alone on stdout, and no cluster is asked', async () => {
  const sandbox = commandSandbox();
  const r = success(await runCommand(['doctor'], { sandbox }));
  const path = r.stdout.trimEnd();
  assert.equal(path, join(sandbox.devtoolHome, 'doctor', 'devtool-doctor-20260101-000000.zip'));
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.match(r.stderr, /not collected: no manifest devtool\.yml in .*project: no manifest summary/);
  assert.match(r.stderr, /doctor file written with \d+ files, secrets redacted: .*\.zip; attach it to your issue/);
  assert.ok('metadata.json' in unzip(path));
});

test('the metadata says where each host program is: here, a source checkout builds them on demand', async () => {
  const r = success(await runCommand(['doctor'], { sandbox: commandSandbox() }));
  const meta = JSON.parse(unzip(r.stdout.trimEnd())['metadata.json']!) as { hostPrograms: Record<string, string> };
  assert.deepEqual(meta.hostPrograms, {
    syncthing: 'built on demand by agent/build.sh syncthing-path',
    'devtool-agent': 'built on demand by agent/build.sh agent-path',
    'devtool-buildkit': 'built on demand by buildkit/build.sh client-path',
  });
});

test('a dev container on a cluster that does not answer: noted, the file written all the same, secrets redacted', async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n    environment:\n      API_TOKEN: s3cr3t-value-42\n');
  const unreachable: Factory['kube'] = async () => {
    throw new DevtoolError('cannot reach the Kubernetes API server https://alpha.invalid:6443');
  };
  const r = success(await runCommand(['doctor'], { sandbox, kube: unreachable }));
  assert.match(r.stderr, /not collected: .*alpha\.invalid/);
  const files = unzip(r.stdout.trimEnd());
  assert.ok('manifest-summary.yml' in files);
  for (const [name, text] of Object.entries(files)) assert.ok(!text.includes('s3cr3t-value-42'), `${name} holds the secret`);
});

test('a dev container the manifest does not have: one line, exit 2, no file', async () => {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'services:\n  api:\n    sync: [".:/app"]\n');
  const r = await runCommand(['doctor', 'web'], { sandbox });
  assert.equal(failure(r, ExitCode.usage), 'Error: devtool.yml has no services entry "web" (it has api); name one of those, or none for all');
  assert.equal(r.stdout, '');
});
