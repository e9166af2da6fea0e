import { type CommandSpec, command, type OptionSpec } from '../../cli/spec.ts';
import { serviceContext, serviceOptions } from '../shared.ts';

const userArg = [{ name: 'USER', required: true, description: 'The user name' }];

export const userCreateOptions = [
  { name: 'admin', type: 'bool', description: 'Make the new user an admin of the service' },
  serviceContext,
] as const satisfies readonly OptionSpec[];
export const userAdminOptions = [
  serviceContext,
  { name: 'revoke', type: 'bool', description: 'Take admin rights back instead of giving them' },
] as const satisfies readonly OptionSpec[];

const load = async () => await import('./run.ts');

export const userCommand: CommandSpec = {
  name: 'user',
  summary: 'List, create, make admin, disable, enable or delete users of the devtool service (admins only)',
  description:
    "An admin's commands on other users' accounts. Disabling one ends its access at once (its tokens are deleted, its sessions and " +
    'sign-ins refused) and keeps its namespaces; deleting one also deletes every namespace it owns, its previews included. Nobody ' +
    'changes their own account here. ' +
    'It needs the devtool service: the current service context (`devtool context use <URL>`) or the one `--context <URL>` names.',
  subcommands: [
    command({
      name: 'admin',
      summary: 'Make a user an admin of the service, or take it back with --revoke (admins only)',
      description:
        'Gives the user the rights of an admin of the devtool service (managing users, every namespace, global previews), or takes them back ' +
        'with --revoke. Its Kubernetes rights do not change.',
      args: userArg,
      options: userAdminOptions,
      load: async () => (await load()).runUserAdmin,
    }),
    command({
      name: 'create',
      summary: 'Create a user with its personal namespace; prints its first API token once (admins only)',
      description:
        'Creates the user, its personal namespace `<USER>-devtool` and a first API token, printed once: hand it over to the user, who ' +
        'logs in with `devtool context use <URL> --token <TOKEN>`. --admin makes the user an admin.',
      args: userArg,
      options: userCreateOptions,
      load: async () => (await load()).runUserCreate,
    }),
    command({
      name: 'delete',
      summary: 'Delete a user and every namespace it owns (admins only)',
      description: 'Deletes the user, its tokens and stored secrets, and every namespace it owns, its preview environments included.',
      args: userArg,
      options: serviceOptions,
      load: async () => (await load()).runUserDelete,
    }),
    command({
      name: 'disable',
      summary: 'Disable a user: its tokens and sessions stop working at once; its namespaces stay (admins only)',
      description: 'Disables the user: its API tokens are deleted, its sessions and sign-ins refused; its namespaces and what runs in them stay.',
      args: userArg,
      options: serviceOptions,
      load: async () => (await load()).runUserDisable,
    }),
    command({
      name: 'enable',
      summary: 'Enable a disabled user again (admins only)',
      description: 'Lets a disabled user sign in again; it needs a new API token, since disabling deleted its tokens.',
      args: userArg,
      options: serviceOptions,
      load: async () => (await load()).runUserEnable,
    }),
    command({
      name: 'list',
      summary: 'List the users of the service: table User, Admin, Disabled (admins only)',
      description: 'Lists every user of the devtool service, by name, with whether it is an admin and whether it is disabled.',
      options: serviceOptions,
      load: async () => (await load()).runUserList,
    }),
  ],
};
