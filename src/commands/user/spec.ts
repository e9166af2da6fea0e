import type { CommandSpec } from '../../cli/spec.ts';

const userArg = [{ name: 'USER', required: true, description: 'The user name' }];

export const userCommand: CommandSpec = {
  name: 'user',
  summary: 'Disable, enable or delete a user of the devtool service (admins only)',
  description:
    "An admin's commands on other users' accounts. Disabling one ends its access at once (its tokens are deleted, its sessions and " +
    'sign-ins refused) and keeps its namespaces; deleting one also deletes every namespace it owns, its previews included. ' +
    'It needs the devtool service: a service context (`devtool context use <URL>`).',
  subcommands: [
    {
      name: 'delete',
      summary: 'Delete a user and every namespace it owns (admins only)',
      description: 'Deletes the user, its tokens and stored secrets, and every namespace it owns, its preview environments included.',
      args: userArg,
      load: async () => (await import('./run.ts')).runUserDelete,
    },
    {
      name: 'disable',
      summary: 'Disable a user: its tokens and sessions stop working at once; its namespaces stay (admins only)',
      description: 'Disables the user: its API tokens are deleted, its sessions and sign-ins refused; its namespaces and what runs in them stay.',
      args: userArg,
      load: async () => (await import('./run.ts')).runUserDisable,
    },
    {
      name: 'enable',
      summary: 'Enable a disabled user again (admins only)',
      description: 'Lets a disabled user sign in again; it needs a new API token, since disabling deleted its tokens.',
      args: userArg,
      load: async () => (await import('./run.ts')).runUserEnable,
    },
  ],
};
