/** `user disable|enable|delete`: an admin's calls to the service's user routes (server/routes/users.ts). */
import type { CommandHandler } from '../../cli/spec.ts';
import { checkNamespaceName } from '../../kube/naming.ts';
import { serviceOf } from '../pipeline/run.ts';

const FEATURE = 'user management';

export const runUserDisable: CommandHandler = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client } = await serviceOf(f, inv.commandName, FEATURE);
  await client.call('disableUser', { params: { name } });
  f.io.stdout.write(`User "${name}" is disabled: its tokens and sessions no longer work; its namespaces stay\n`);
};

export const runUserEnable: CommandHandler = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client } = await serviceOf(f, inv.commandName, FEATURE);
  await client.call('enableUser', { params: { name } });
  f.io.stdout.write(`User "${name}" is enabled: it signs in again, or asks the operator for a token\n`);
};

export const runUserDelete: CommandHandler = async (f, inv) => {
  const name = userName(inv.requireArg(0, 'USER'));
  const { client } = await serviceOf(f, inv.commandName, FEATURE);
  const deleted = await client.call('deleteUser', { params: { name } });
  f.io.stdout.write(`User "${name}" is deleted, with its namespaces: ${deleted.namespaces.join(', ') || 'none'}\n`);
};

/** A user name follows the namespace rule (its personal namespace is `<name>-devtool`). */
const userName = (given: string) => checkNamespaceName(given, 'user name');
