import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ExitCode } from '../../base/errors.ts';
import { renderStignore } from '../../init/ignore.ts';
import { loadManifest } from '../../manifest/load.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success } from '../../../test/command-harness.ts';

/** A sandbox whose project is the Node.js application with Kubernetes manifests of init's fixtures. */
function nodeProject(): CommandSandbox {
  const sandbox = commandSandbox();
  cpSync(new URL('../../init/testdata/node-k8s', import.meta.url).pathname, sandbox.project, { recursive: true });
  rmSync(join(sandbox.project, 'expected-devtool.yml'));
  return sandbox;
}

test('-v1 writes the guessed manifest and a .stignore, and prints what was written and the next step', async () => {
  const sandbox = nodeProject();
  const r = success(await runCommand(['init', '-v1'], { sandbox }));
  const [written, ignore, next] = r.stdout.split('\n');
  assert.match(written!, /^✓ devtool\.yml created \(.*; dev container "[^"]+" forwarding \d+\)$/);
  assert.equal(ignore, `✓ .stignore created (for npm): what 'devtool up' never synchronizes`);
  assert.equal(next, '  next: devtool deploy, then devtool up');
  assert.equal(r.stderr, '');
  const m = loadManifest('devtool.yml', { cwd: sandbox.project, env: {} });
  assert.deepEqual(
    m.deploy.commands.map((c) => c.command),
    ['kubectl apply -f k8s'],
  );
  assert.equal(readFileSync(join(sandbox.project, '.stignore'), 'utf8'), renderStignore(['npm']));
});

test('--file, --context and --namespace are named in the next step', async () => {
  const sandbox = nodeProject();
  const r = success(await runCommand(['init', '--v1', '--file', 'dev.yml', '-c', 'beta', '-n', 'feature'], { sandbox }));
  assert.match(
    r.stdout,
    /^ {2}next: devtool deploy --context beta --namespace feature --file dev\.yml, then devtool up --context beta --namespace feature --file dev\.yml$/m,
  );
  assert.ok(existsSync(join(sandbox.project, 'dev.yml')));
});

test('refusals come before any question or write: no terminal, an existing file, a bad namespace or context', async () => {
  const sandbox = nodeProject();
  const manifest = join(sandbox.project, 'devtool.yml');
  assert.match(failure(await runCommand(['init'], { sandbox }), ExitCode.usage), /there is no terminal: run 'devtool init -v1'/);
  assert.match(failure(await runCommand(['init', '-v1', '-n', 'Bad_NS'], { sandbox }), ExitCode.usage), /invalid namespace "Bad_NS"/);
  assert.equal(
    failure(await runCommand(['init', '-v1', '--context', 'gamma'], { sandbox }), ExitCode.failure),
    `Error: unknown context "gamma": 'devtool context list' shows the contexts`,
  );
  assert.equal(existsSync(manifest), false);
  writeFileSync(manifest, 'name: mine\n');
  assert.equal(failure(await runCommand(['init', '-v1'], { sandbox }), ExitCode.failure), 'Error: devtool.yml already exists: pass --replace to overwrite it');
  assert.equal(readFileSync(manifest, 'utf8'), 'name: mine\n');
  success(await runCommand(['init', '-v1', '--replace'], { sandbox }));
  assert.match(readFileSync(manifest, 'utf8'), /kubectl apply -f k8s/);
});

test('an existing .stignore is kept, and init says what it lacks', async () => {
  const sandbox = nodeProject();
  writeFileSync(join(sandbox.project, '.stignore'), 'node_modules\n.git\n');
  const r = success(await runCommand(['init', '-v1'], { sandbox }));
  assert.equal(readFileSync(join(sandbox.project, '.stignore'), 'utf8'), 'node_modules\n.git\n');
  assert.match(r.stdout, /^! \.stignore exists and is kept as it is; init would also ignore: \.devtool \.env /m);
});

test('on a terminal the answers typed end up in the manifest', async () => {
  const sandbox = nodeProject();
  const r = success(await runCommand(['init'], { sandbox, terminal: true, answers: ['0', 'api', '8081'] }));
  assert.match(r.stdout, /dev container "api" forwarding 8081/);
  const manifest = parseYaml(readFileSync(join(sandbox.project, 'devtool.yml'), 'utf8')) as { services: Record<string, { forward: string[] }> };
  assert.deepEqual(Object.keys(manifest.services), ['api']);
  assert.deepEqual(manifest.services['api']!.forward, ['8081:8081']);
});

test('beside a Compose file the dev container is the service that mounts a host folder', async () => {
  const sandbox = commandSandbox();
  writeFileSync(
    join(sandbox.project, 'compose.yaml'),
    'services:\n  db:\n    image: postgres:16\n  api:\n    image: node:20\n    volumes: ["./src:/app/src"]\n',
  );
  const r = success(await runCommand(['init', '-v1'], { sandbox }));
  assert.match(r.stdout, /dev container "api"/);
  const manifest = parseYaml(readFileSync(join(sandbox.project, 'devtool.yml'), 'utf8')) as { services: Record<string, unknown> };
  assert.deepEqual(Object.keys(manifest.services), ['api']);
});
