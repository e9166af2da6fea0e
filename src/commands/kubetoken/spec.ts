import { command, type OptionSpec } from '../../cli/spec.ts';

export const kubetokenOptions = [
  { name: 'context', short: 'c', type: 'string', description: 'The devtool service context (its URL) whose Kubernetes token to print' },
] as const satisfies readonly OptionSpec[];

/** The credential plugin of the kubeconfig entries `devtool kubeconfig` writes for service contexts: kubectl runs it. */
export const kubetokenCommand = command({
  name: 'kubetoken',
  summary: 'Print an ExecCredential with a short-lived Kubernetes token of a service context (kubectl credential plugin)',
  description:
    'Prints a client.authentication.k8s.io ExecCredential with a Kubernetes token of the user of the service context --context, cached ' +
    'until it is about to expire. The kubeconfig entries `devtool kubeconfig` writes for service contexts run it; --context is required.',
  hidden: true,
  options: kubetokenOptions,
  load: async () => (await import('./run.ts')).runKubetoken,
});
