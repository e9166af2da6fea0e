import type { CommandSpec } from '../../cli/spec.ts';

export const namespaceCommand: CommandSpec = {
  name: 'namespace',
  summary: 'Select, create, delete or list namespaces',
  description:
    'Without a subcommand, prompts to select an existing namespace or create one.\n' +
    '`create`, `delete` and `list` are cluster-only: they need a cluster with the devtool service installed.',
  load: async () => (await import('./run.ts')).runNamespacePrompt,
  subcommands: [
    {
      name: 'create',
      summary: 'Create a namespace and switch the context to it (cluster-only)',
      args: [{ name: 'NAMESPACE', required: true }],
      load: async () => (await import('./run.ts')).runNamespaceCreate,
    },
    {
      name: 'delete',
      summary: 'Delete a namespace (cluster-only)',
      args: [{ name: 'NAMESPACE', required: true }],
      load: async () => (await import('./run.ts')).runNamespaceDelete,
    },
    {
      name: 'list',
      summary: 'List namespaces: table Namespace, Status; the current one marked * (cluster-only)',
      load: async () => (await import('./run.ts')).runNamespaceList,
    },
    {
      name: 'use',
      summary: 'Set the default namespace of the current context',
      args: [{ name: 'NAMESPACE', required: true }],
      load: async () => (await import('./run.ts')).runNamespaceUse,
    },
  ],
};
