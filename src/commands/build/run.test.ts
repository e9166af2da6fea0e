import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand } from '../../../test/command-harness.ts';

function twoImages(): CommandSandbox {
  const sandbox = commandSandbox();
  writeFileSync(join(sandbox.project, 'devtool.yml'), 'build:\n  api:\n    context: api\n  web:\n    context: web\n');
  for (const image of ['api', 'web']) {
    mkdirSync(join(sandbox.project, image));
    writeFileSync(join(sandbox.project, image, 'Dockerfile'), 'FROM scratch\n');
  }
  return sandbox;
}

test('--export-cache names one image: with several to build, one line and nothing built', async () => {
  const sandbox = twoImages();
  const r = await runCommand(['build', '--export-cache', 'registry.example/cache:x'], { sandbox });
  assert.equal(
    failure(r, ExitCode.usage),
    'Error: --export-cache names one image reference, and 2 images would be built (api, web): build one image, or set export_cache per image in the manifest',
  );
  assert.equal(r.stdout, '');
});

test('a bad --secret is a usage error naming the flag, before the manifest is read', async () => {
  const sandbox = commandSandbox();
  assert.match(
    failure(await runCommand(['build', '--secret', 'nonsense'], { sandbox }), ExitCode.usage),
    /invalid value "nonsense" for flag --secret: .*; use id=<ID>,src=<LOCAL_PATH>$/,
  );
  assert.match(
    failure(await runCommand(['build', '--secret', 'id=npm,src=missing.txt'], { sandbox }), ExitCode.usage),
    /for flag --secret: file missing\.txt not found/,
  );
});

test('an image the manifest does not build, or no manifest: one line', async () => {
  assert.equal(
    failure(await runCommand(['build', 'db'], { sandbox: twoImages() }), ExitCode.usage),
    'Error: unknown image "db": the build section has api, web',
  );
  const empty = commandSandbox();
  assert.equal(
    failure(await runCommand(['build'], { sandbox: empty }), ExitCode.failure),
    `Error: nothing to build in ${empty.project}: no devtool.yml and no Compose file; name one with --file, or a Dockerfile with -f Dockerfile`,
  );
  const noFolder = commandSandbox();
  writeFileSync(join(noFolder.project, 'devtool.yml'), 'build:\n  api:\n    context: api\n');
  assert.equal(
    failure(await runCommand(['build'], { sandbox: noFolder }), ExitCode.failure),
    'Error: devtool.yml:3:14: field build.api.context: build context api is not a folder',
  );
  assert.match(failure(await runCommand(['build', '--context', 'gamma'], { sandbox: twoImages() }), ExitCode.usage), /--context: unknown context "gamma"/);
});
