import type { ArgSpec, CommandSpec } from '../../cli/spec.ts';

const NAMESPACE_ARG: readonly ArgSpec[] = [{ name: 'NAMESPACE', required: true, description: 'A Kubernetes namespace name (a DNS label)' }];

export const namespaceCommand: CommandSpec = {
  name: 'namespace',
  summary: 'Select, create, delete or list namespaces',
  description:
    "Without a subcommand, prompts to select one of your namespaces (on a plain cluster, one of the cluster's).\n" +
    '`create`, `delete` and `list` need the devtool service: a service context (`devtool context use <URL>`).',
  load: async () => (await import('./run.ts')).runNamespacePrompt,
  subcommands: [
    {
      name: 'create',
      summary: 'Create a namespace and switch the context to it (devtool service)',
      description: 'Creates a namespace you own on the devtool service (one you own already is no failure) and makes it the namespace of the current context.',
      args: NAMESPACE_ARG,
      load: async () => (await import('./run.ts')).runNamespaceCreate,
    },
    {
      name: 'delete',
      summary: 'Delete a namespace (devtool service)',
      description:
        "Deletes a namespace you own (an admin may delete any user's) on the devtool service, with everything in it. When it is the namespace of " +
        'the current context, the context moves to your personal namespace.',
      args: NAMESPACE_ARG,
      load: async () => (await import('./run.ts')).runNamespaceDelete,
    },
    {
      name: 'list',
      summary: 'List namespaces: table Namespace, Status; the current one marked * (devtool service)',
      description: 'Lists your namespaces on the devtool service with their status (Active, or Terminating while being deleted); the current one is marked *.',
      load: async () => (await import('./run.ts')).runNamespaceList,
    },
    {
      name: 'use',
      summary: 'Set the default namespace of the current context',
      description:
        'Makes NAMESPACE the namespace of the current context, and prints a line naming it and the host. On a service context it must be one of ' +
        'your namespaces.',
      args: NAMESPACE_ARG,
      load: async () => (await import('./run.ts')).runNamespaceUse,
    },
  ],
};
