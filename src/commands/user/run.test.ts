import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../../server/accounts.ts';
import { ExitCode } from '../../base/errors.ts';
import { commandSandbox, type CommandSandbox, failure, runCommand, success, TEST_NOW } from '../../../test/command-harness.ts';
import { type InProcessService, inProcessService, logIn } from '../../../test/in-process-service.ts';

let service: InProcessService;
let admin: CommandSandbox;
before(async () => {
  service = await inProcessService();
  admin = commandSandbox();
  await logIn(admin, service, service.admin);
});
after(() => service.close());

const user = (args: string[], sandbox = admin) => runCommand(['user', ...args], { sandbox, service: service.client });

test('an admin disables, enables and deletes a user; each prints one line of what it means', async () => {
  const bob = await createAccount(service.store, 'bob', false, TEST_NOW);
  assert.equal(success(await user(['disable', 'bob'])).stdout, 'User "bob" is disabled: its tokens and sessions no longer work; its namespaces stay\n');
  const bobs = commandSandbox();
  const refused = await runCommand(['context', 'use', 'https://devtool.example', '--token', bob.token], { sandbox: bobs, service: service.client });
  assert.equal(failure(refused, ExitCode.failure), 'Error: token revoked or expired: log in again with devtool context use https://devtool.example');

  assert.equal(success(await user(['enable', 'bob'])).stdout, 'User "bob" is enabled: it signs in again, or asks the operator for a token\n');
  assert.equal(success(await user(['delete', 'bob'])).stdout, 'User "bob" is deleted, with its namespaces: bob-devtool\n');
  assert.equal(failure(await user(['delete', 'bob']), ExitCode.failure), 'Error: no user bob');
});

test('an admin lists users, creates one (its token printed once, on stdout alone) and makes it an admin and back', async () => {
  const made = success(await user(['create', 'dora']));
  assert.match(made.stdout, /^\S{20,}\n$/, 'stdout is the token alone, for a script');
  assert.equal(
    made.stderr,
    'User "dora" is created with its namespace dora-devtool; its first API token follows, shown only now:\n' +
      'It logs in with: devtool context use https://devtool.example --token <TOKEN>\n',
  );
  const doras = commandSandbox();
  success(await runCommand(['context', 'use', 'https://devtool.example', '--token', made.stdout.trim()], { sandbox: doras, service: service.client }));

  assert.equal(success(await user(['admin', 'dora'])).stdout, 'User "dora" is an admin of the service\n');
  const listed = success(await user(['list'], doras)).stdout;
  assert.match(listed, /^User +Admin +Disabled\n/);
  assert.match(listed, /\ndora +yes +no\n/);
  assert.equal(success(await user(['admin', 'dora', '--revoke'])).stdout, 'User "dora" is no longer an admin of the service\n');
  assert.equal(failure(await user(['list'], doras), ExitCode.failure), 'Error: only admins can list users');
  assert.equal(failure(await user(['create', 'dora']), ExitCode.failure), 'Error: user dora already exists');
  assert.equal(
    failure(await user(['admin', 'dora', '--bogus']), ExitCode.usage)
      .split('\n')[0]
      ?.startsWith('Error: unknown flag --bogus'),
    true,
  );
});

test('a user who is no admin is refused by the service, in one line', async () => {
  const alice = commandSandbox();
  await logIn(alice, service, service.alice);
  const r = await user(['disable', 'root'], alice);
  assert.equal(failure(r, ExitCode.failure), 'Error: only admins can disable users');
  assert.equal(r.stdout, '');
});

test('a bad or missing user name is a usage error; a plain cluster has no users (exit 3)', async () => {
  assert.match(failure(await user(['disable', 'Bad_Name']), ExitCode.usage), /invalid user name "Bad_Name"/);
  assert.match(failure(await user(['enable']), ExitCode.usage), /missing argument <USER> for 'devtool user enable'/);
  assert.match(
    failure(await user(['delete', 'bob'], commandSandbox()), ExitCode.unavailable),
    /^Error: 'devtool user delete' needs the devtool service, and the current context "alpha" is a plain Kubernetes cluster without it \(user management/,
  );
});

test('--context acts on the service context it names while the current one is a plain cluster', async () => {
  const sandbox = commandSandbox();
  await logIn(sandbox, service, service.admin);
  success(await runCommand(['context', 'use', 'alpha'], { sandbox }));
  assert.match(success(await user(['list', '--context', 'https://devtool.example'], sandbox)).stdout, /^User\s+Admin\s+Disabled\n/);
  assert.match(failure(await user(['list'], sandbox), ExitCode.unavailable), /or pass --context <URL>$/);
});
