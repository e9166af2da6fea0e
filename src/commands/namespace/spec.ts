import { type ArgSpec, type CommandSpec, command } from '../../cli/spec.ts';
import { serviceOptions } from '../shared.ts';

const NAMESPACE_ARG: readonly ArgSpec[] = [{ name: 'NAMESPACE', required: true, description: 'A Kubernetes namespace name (a DNS label)' }];

export const namespaceCommand: CommandSpec = {
  name: 'namespace',
  summary: 'Select, create, delete, list, put to sleep or wake namespaces',
  description:
    "Without a subcommand, prompts to select one of your namespaces (on a plain cluster, one of the cluster's).\n" +
    '`create`, `delete`, `list`, `sleep` and `wake` need the devtool service: the current service context ' +
    '(`devtool context use <URL>`) or the one `--context <URL>` names.',
  load: async () => (await import('./run.ts')).runNamespacePrompt,
  subcommands: [
    command({
      name: 'create',
      summary: 'Create a namespace and switch the context to it (devtool service)',
      description:
        'Creates a namespace you own on the devtool service (one you own already is no failure) and makes it the namespace of the current ' +
        'context (or of the one --context names, which does not become current).',
      args: NAMESPACE_ARG,
      options: serviceOptions,
      load: async () => (await import('./run.ts')).runNamespaceCreate,
    }),
    command({
      name: 'delete',
      summary: 'Delete a namespace (devtool service)',
      description:
        "Deletes a namespace you own (an admin may delete any user's) on the devtool service, with everything in it. When it is the namespace of " +
        'the context (the current one, or the one --context names), that context moves to your personal namespace.',
      args: NAMESPACE_ARG,
      options: serviceOptions,
      load: async () => (await import('./run.ts')).runNamespaceDelete,
    }),
    command({
      name: 'sleep',
      summary: 'Put a namespace to sleep: its workloads scaled to zero, its CronJobs suspended (devtool service)',
      description:
        'Scales the Deployments and StatefulSets of a namespace you own (an admin: any) to zero and suspends its CronJobs, each keeping what ' +
        "to restore; dev containers of 'up' sleep too, and 'up' is refused there until the wake. Sleeping twice changes nothing.",
      args: NAMESPACE_ARG,
      options: serviceOptions,
      load: async () => (await import('./run.ts')).runNamespaceSleep,
    }),
    command({
      name: 'wake',
      summary: 'Wake a sleeping namespace: its workloads get back exactly what they had (devtool service)',
      description:
        'Gives the workloads of a sleeping namespace the replicas they had and its CronJobs their own suspend; the namespace shows Waking ' +
        'until they are available.',
      args: NAMESPACE_ARG,
      options: serviceOptions,
      load: async () => (await import('./run.ts')).runNamespaceWake,
    }),
    command({
      name: 'list',
      summary: 'List namespaces: table Namespace, Status (and Sleep); the current one marked * (devtool service)',
      description:
        'Lists your namespaces on the devtool service with their status (Active, Sleeping, Waking, or Terminating while being deleted); the ' +
        'current one is marked *. The Sleep column, when any namespace has something to show, says since when and by whom one sleeps, and ' +
        'when the service puts one to sleep or deletes it for being idle.',
      options: serviceOptions,
      load: async () => (await import('./run.ts')).runNamespaceList,
    }),
    command({
      name: 'use',
      summary: 'Set the default namespace of the current context',
      description:
        'Makes NAMESPACE the namespace of the current context (or of the one --context names, which does not become current), and prints ' +
        'a line naming it and the host. On a service context it must be one of your namespaces.',
      args: NAMESPACE_ARG,
      options: serviceOptions,
      load: async () => (await import('./run.ts')).runNamespaceUse,
    }),
  ],
};
