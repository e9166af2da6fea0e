import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success, TEST_NOW } from '../../../test/command-harness.ts';
import { type InProcessService, inProcessService, logIn, SERVICE_URL } from '../../../test/in-process-service.ts';

let service: InProcessService;
before(async () => {
  service = await inProcessService();
});
after(() => service.close());

async function aliceSandbox(): Promise<CommandSandbox> {
  const sandbox = commandSandbox();
  await logIn(sandbox, service, service.alice);
  return sandbox;
}

const run = (sandbox: CommandSandbox, args: string[]) => runCommand(['namespace', ...args], { sandbox, service: service.client });
const current = async (sandbox: CommandSandbox) =>
  (JSON.parse(success(await runCommand(['context', 'show'], { sandbox })).stdout) as { namespace: string }).namespace;

test('on a plain cluster: `namespace use` switches the context; the others need the service (exit 3)', async () => {
  const sandbox = commandSandbox();
  const r = success(await run(sandbox, ['use', 'other']));
  assert.deepEqual([r.stdout, r.stderr], ['Using namespace "other" @ alpha (https://alpha.invalid:6443)\n', '']);
  assert.equal(await current(sandbox), 'other');
  for (const args of [['list'], ['create', 'feature'], ['delete', 'feature']]) {
    assert.match(
      failure(await run(sandbox, args), ExitCode.unavailable),
      new RegExp(`^Error: 'devtool namespace ${args[0]}' needs the devtool service, and the current context "alpha" is a plain Kubernetes cluster`),
    );
  }
});

test('bad names and missing arguments: one line, exit 2, the context unchanged', async () => {
  const sandbox = commandSandbox();
  assert.match(failure(await run(sandbox, ['use', 'Bad_Name']), ExitCode.usage), /invalid namespace "Bad_Name"/);
  assert.match(failure(await run(sandbox, ['create', 'x'.repeat(64)]), ExitCode.usage), /invalid namespace/);
  assert.match(failure(await run(sandbox, ['use']), ExitCode.usage), /missing argument <NAMESPACE> for 'devtool namespace use'/);
  assert.match(failure(await run(sandbox, []), ExitCode.usage), /no terminal to prompt on: pass the namespace: devtool namespace use <NAMESPACE>/);
  assert.equal(await current(sandbox), 'default');
});

test('on a service context: create switches to the new namespace, list marks it, delete moves back to the personal one', async () => {
  const sandbox = await aliceSandbox();
  const created = success(await run(sandbox, ['create', 'feature']));
  assert.equal(created.stdout, `Namespace "feature" created\nUsing namespace "feature" @ ${SERVICE_URL} (${SERVICE_URL})\n`);
  assert.equal(success(await run(sandbox, ['create', 'feature'])).stdout.split('\n')[0], 'Namespace "feature" is already yours');
  assert.equal(success(await run(sandbox, ['list'])).stdout, 'Namespace       Status\nalice-devtool   Active\nfeature *       Active\n');

  const deleted = success(await run(sandbox, ['delete', 'feature']));
  assert.equal(deleted.stdout, `Namespace "feature" is being deleted\nUsing namespace "alice-devtool" @ ${SERVICE_URL} (${SERVICE_URL})\n`);
  assert.equal(await current(sandbox), 'alice-devtool');
});

test("on a service context: only the user's own namespaces can be used; the service's refusals are one line", async () => {
  const sandbox = await aliceSandbox();
  assert.match(
    failure(await run(sandbox, ['use', 'kube-system']), ExitCode.failure),
    // (Other tests' namespaces of alice's may be listed too: the service is shared by this file.)
    new RegExp(`^Error: namespace "kube-system" is not one of yours on ${SERVICE_URL} \\(yours: alice-devtool[^)]*\\)$`),
  );
  assert.equal(
    failure(await run(sandbox, ['delete', 'root-devtool']), ExitCode.failure),
    'Error: namespace root-devtool: only its owner (root) or an admin can delete it',
  );
  assert.equal(
    failure(await run(sandbox, ['create', 'kube-mine']), ExitCode.failure),
    "Error: namespace kube-mine is reserved (Kubernetes' own: kube-*, default): choose another name",
  );
  assert.equal(await current(sandbox), 'alice-devtool');
});

test("`namespace` on a terminal: picks one of the user's namespaces", async () => {
  const sandbox = await aliceSandbox();
  success(await run(sandbox, ['create', 'second']));
  const r = success(await runCommand(['namespace'], { sandbox, service: service.client, terminal: true, answers: ['alice-devtool'] }));
  assert.equal(r.stdout, `Using namespace "alice-devtool" @ ${SERVICE_URL} (${SERVICE_URL})\n`);
});

test('a service context without a token: one line saying how to log in (exit 3)', async () => {
  const sandbox = commandSandbox();
  // In CI the login is refused, and the context stays stored and selected without a token.
  const login = await runCommand(['context', 'use', SERVICE_URL], { sandbox, service: service.client, env: { CI: 'true' } });
  assert.match(failure(login, ExitCode.failure), /^Error: cannot log in to https:\/\/devtool\.example: /);
  assert.equal(
    failure(await run(sandbox, ['list']), ExitCode.unavailable),
    `Error: 'devtool namespace list' requires a logged-in user: log in with 'devtool context use ${SERVICE_URL} --token <API_TOKEN>' or set DEVTOOL_TOKEN`,
  );
});

test('sleep and wake on a service context: one line each; list shows Sleeping with since when and by whom', async () => {
  const sandbox = await aliceSandbox();
  success(await run(sandbox, ['create', 'napping']));
  service.owned.deployments.set('napping', [{ metadata: { name: 'web' }, spec: { replicas: 2 } }]);
  service.owned.cronJobs.set('napping', [{ metadata: { name: 'nightly' }, spec: {} }]);
  const since = TEST_NOW.toISOString();
  assert.equal(
    success(await run(sandbox, ['sleep', 'napping'])).stdout,
    `Namespace "napping" is asleep since ${since}: 'devtool namespace wake napping' wakes it\n`,
  );
  assert.deepEqual([service.owned.deployments.get('napping')![0]!.spec.replicas, service.owned.cronJobs.get('napping')![0]!.spec.suspend], [0, true]);
  const listed = success(await run(sandbox, ['list'])).stdout;
  assert.match(listed, /^Namespace\s+Status\s+Sleep\n/);
  assert.match(listed, new RegExp(`\\nnapping \\*\\s+Sleeping\\s+since ${since} by alice\\n`));
  assert.match(listed, /\nalice-devtool\s+Active\s+-\n/);

  assert.equal(success(await run(sandbox, ['wake', 'napping'])).stdout, 'Namespace "napping" is waking: its workloads are starting\n');
  assert.deepEqual([service.owned.deployments.get('napping')![0]!.spec.replicas, service.owned.cronJobs.get('napping')![0]!.spec.suspend], [2, false]);
  assert.match(success(await run(sandbox, ['list'])).stdout, /\nnapping \*\s+Waking\s+waking since /);
  assert.equal(
    failure(await run(sandbox, ['sleep', 'root-devtool']), ExitCode.failure),
    'Error: namespace root-devtool: only its owner (root) or an admin can put it to sleep',
  );
});

test('--context names the service context to act on; the current context and its namespace stay as they are', async () => {
  const sandbox = await aliceSandbox();
  success(await runCommand(['context', 'use', 'alpha'], { sandbox }));
  const created = success(await run(sandbox, ['create', 'elsewhere', '--context', SERVICE_URL]));
  assert.equal(created.stdout, `Namespace "elsewhere" created\nUsing namespace "elsewhere" @ ${SERVICE_URL} (${SERVICE_URL})\n`);
  const shown = JSON.parse(success(await runCommand(['context', 'show'], { sandbox })).stdout) as { name: string; namespace: string };
  assert.deepEqual([shown.name, shown.namespace], ['alpha', 'default']);
  // The flag before the command works too, and the service context now uses the new namespace.
  assert.match(
    success(await runCommand(['--context', SERVICE_URL, 'namespace', 'list'], { sandbox, service: service.client })).stdout,
    /\nelsewhere \*\s+Active\b/,
  );
  assert.equal(
    success(await run(sandbox, ['sleep', 'elsewhere', '-c', SERVICE_URL])).stdout,
    `Namespace "elsewhere" is asleep since ${TEST_NOW.toISOString()}: 'devtool namespace wake elsewhere' wakes it\n`,
  );
  assert.match(
    failure(await run(sandbox, ['list', '--context', 'alpha']), ExitCode.unavailable),
    /^Error: 'devtool namespace list' needs the devtool service, and the context "alpha" is a plain Kubernetes cluster without it/,
  );
  assert.match(failure(await run(sandbox, ['list', '--context', 'nowhere']), ExitCode.usage), /^Error: --context: unknown context "nowhere" \(known: /);
});
