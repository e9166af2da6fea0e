import { command, type OptionSpec } from '../../cli/spec.ts';

/** Settings a context can be given when it is selected. */
export const contextOptions = [
  { name: 'token', type: 'string', sensitive: 'value', description: 'API token for non-browser authentication (scripting)' },
  { name: 'namespace', short: 'n', type: 'string', description: 'Namespace of the context' },
  { name: 'builder', type: 'string', description: 'URL of the builder service (tcp://HOST:PORT of a BuildKit daemon)' },
  { name: 'registry', type: 'string', description: 'Registry host images are pushed to, e.g. localhost:5000 (plain clusters)' },
  { name: 'endpoint-domain', type: 'string', description: 'Domain of public endpoints, e.g. apps.example.com (plain clusters)' },
  {
    name: 'ingress-class',
    type: 'string',
    defaultText: "the cluster's default class; a service's own",
    description: 'IngressClass the Ingresses of public endpoints name, e.g. traefik',
  },
] as const satisfies readonly OptionSpec[];

export const contextCommand = command({
  name: 'context',
  summary: 'Manage the cluster and namespace devtool works on',
  description:
    'A context is a cluster, a user and a namespace: the default for every command. It is either a kubeconfig context name or a devtool service ' +
    'URL.\nWithout a subcommand, prompts to select an existing context or create a new one; with a URL, or DEVTOOL_URL set, selects that ' +
    'service without a prompt (with --token: non-interactive login).\n' +
    'Without a token, logs in: in the browser when one can open here, else with a device code (BROWSER=none forces it); never in CI.\n' +
    'DEVTOOL_URL and DEVTOOL_TOKEN select a service context for one run. DEVTOOL_CA_CERT=<PEM file> trusts a service behind a private CA.',
  args: [{ name: 'URL', description: 'A devtool service URL to select (default: DEVTOOL_URL, else a prompt)' }],
  options: contextOptions,
  load: async () => (await import('./run.ts')).runContextPrompt,
  subcommands: [
    command({
      name: 'use',
      summary: 'Set the default context',
      description: 'Sets the default context; prompts when no argument is given. Prints a line naming the namespace and host.',
      args: [{ name: 'URL_OR_CLUSTER_CONTEXT', description: 'A devtool service URL or a kubeconfig context name (default: a prompt)' }],
      options: contextOptions,
      examples: ['devtool context use devtool-local --namespace dev', 'devtool context use https://devtool.example.com --token $TOKEN'],
      load: async () => (await import('./run.ts')).runContextUse,
    }),
    {
      name: 'list',
      summary: 'List contexts (table Name, Namespace, Builder, Registry; the current one marked *)',
      description:
        'Lists the known contexts, the current one marked *: those with devtool settings, and the one DEVTOOL_URL and DEVTOOL_TOKEN make for this ' +
        "run. Builder is where images are built (the hosted builder on a service context, else the context's BuildKit daemon or Docker).",
      load: async () => (await import('./run.ts')).runContextList,
    },
    {
      name: 'show',
      summary: 'Print the current context as JSON (the token is printed as REDACTED)',
      description:
        'Prints the current context as JSON: name, token (REDACTED when there are credentials, else empty), namespace, builder, registry and ' +
        'isDevtool (true for a devtool service context).',
      load: async () => (await import('./run.ts')).runContextShow,
    },
    {
      name: 'delete',
      summary: 'Delete a context',
      description:
        "Deletes devtool's settings of a context (a service URL and its token, or what devtool keeps for a kubeconfig context). A kubeconfig " +
        "context itself is never changed: remove it with 'kubectl config delete-context'.",
      args: [{ name: 'CONTEXT_URL_OR_NAME', required: true, description: 'The context to delete, as `context list` names it' }],
      load: async () => (await import('./run.ts')).runContextDelete,
    },
  ],
});
