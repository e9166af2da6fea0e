import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DevtoolError } from '../base/errors.ts';
import { loadDestroySource } from './environment-deploy.ts';

const work = mkdtempSync(join(tmpdir(), 'devtool-destroy-source-'));
after(() => rmSync(work, { recursive: true, force: true }));

mkdirSync(join(work, 'deploy'));
writeFileSync(join(work, 'devtool.yml'), 'name: main-app\ndeploy:\n  - echo deploy\ndestroy:\n  - echo from-devtool-yml\n');
writeFileSync(
  join(work, 'deploy', 'preview.yml'),
  'name: preview\ndeploy:\n  - echo deploy\ndestroy:\n  - name: remove ${TARGET}\n    command: rm "${TARGET}"\n',
);
writeFileSync(join(work, 'stack.yaml'), 'services:\n  web:\n    image: nginx\n');

const commands = (m: { destroy: readonly { command: string }[] } | undefined) => m?.destroy.map((c) => c.command);

test('destroy --file: the manifest named, loaded as deploy loads it (variables from the environment), named by its folder', () => {
  const { manifest, folder } = loadDestroySource(work, 'deploy/preview.yml', { TARGET: '/tmp/a file' });
  assert.equal(manifest?.name, 'preview');
  // The name is expanded from the environment when loaded; the command is left to the shell.
  assert.deepEqual(
    manifest?.destroy.map((c) => [c.name, c.command]),
    [['remove /tmp/a file', 'rm "${TARGET}"']],
  );
  assert.equal(folder, join(work, 'deploy'));
});

test('destroy without --file: devtool.yml of the folder when there is one, else no manifest', () => {
  assert.deepEqual(commands(loadDestroySource(work, undefined, {}).manifest), ['echo from-devtool-yml']);
  const empty = join(work, 'deploy');
  assert.deepEqual(loadDestroySource(empty, undefined, {}), { folder: empty });
});

test('destroy --file with a Compose file: no destroy commands', () => {
  assert.deepEqual(loadDestroySource(work, 'stack.yaml', {}), { folder: work });
});

test('destroy --file with a missing file: one line naming it', () => {
  assert.throws(
    () => loadDestroySource(work, 'deploy/missing.yml', {}),
    (err: unknown) => err instanceof DevtoolError && err.message === 'deploy/missing.yml not found',
  );
});
