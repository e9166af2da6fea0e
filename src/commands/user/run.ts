/** `user list|create|admin|disable|enable|delete`: an admin's calls to the service's user routes (server/routes/users.ts). */
import type { CommandHandler } from '../../cli/spec.ts';
import { formatTable } from '../../io/table.ts';
import { checkNamespaceName } from '../../kube/naming.ts';
import { serviceTarget } from '../require-service.ts';
import type { serviceOptions } from '../shared.ts';
import type { userAdminOptions, userCreateOptions } from './spec.ts';

const FEATURE = 'user management';

export const runUserList: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const { users } = await client.call('listUsers', {});
  f.io.stdout.write(
    formatTable(
      ['User', 'Admin', 'Disabled'],
      users.map((u) => [u.name, u.admin ? 'yes' : 'no', u.disabled ? 'yes' : 'no']),
    ),
  );
};

export const runUserCreate: CommandHandler<typeof userCreateOptions> = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client, ctx } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const made = await client.call('createUser', { body: { name, admin: inv.opts.admin === true } });
  f.io.stderr.write(
    `User "${made.name}"${made.admin ? ' (an admin)' : ''} is created with its namespace ${made.namespace}; its first API token follows, shown only now:\n`,
  );
  f.io.stdout.write(`${made.token}\n`);
  f.io.stderr.write(`It logs in with: devtool context use ${ctx.name} --token <TOKEN>\n`);
};

export const runUserAdmin: CommandHandler<typeof userAdminOptions> = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const admin = inv.opts.revoke !== true;
  await client.call('setUserAdmin', { params: { name }, body: { admin } });
  f.io.stdout.write(admin ? `User "${name}" is an admin of the service\n` : `User "${name}" is no longer an admin of the service\n`);
};

export const runUserDisable: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  await client.call('disableUser', { params: { name } });
  f.io.stdout.write(`User "${name}" is disabled: its tokens and sessions no longer work; its namespaces stay\n`);
};

export const runUserEnable: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  await client.call('enableUser', { params: { name } });
  f.io.stdout.write(`User "${name}" is enabled: it signs in again, or asks the operator for a token\n`);
};

export const runUserDelete: CommandHandler<typeof serviceOptions> = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client } = await serviceTarget(f, inv.commandName, FEATURE, inv.opts.context);
  const deleted = await client.call('deleteUser', { params: { name } });
  f.io.stdout.write(`User "${name}" is deleted, with its namespaces: ${deleted.namespaces.join(', ') || 'none'}\n`);
};

/** A user name follows the namespace rule (its personal namespace is `<name>-devtool`). */
const userName = (given: string) => checkNamespaceName(given, 'user name');
