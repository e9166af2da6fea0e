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
